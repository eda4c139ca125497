// iptables-save / iptables -S text -> netfilter tables.
//
// One pass over the text with string_views: no regex, and words are copied
// only when they land in the model. Words are split the way iptables-restore
// splits them (blanks separate, "..." groups, backslash escapes inside quotes),
// so anything iptables-restore would reject is rejected here with FILE:LINE.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <deque>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "collectors/import/import.h"
#include "collectors/import/rule_ledger.h"
#include "model/iptables.h"
#include "util/error.h"
#include "util/memory.h"

namespace dpscope::importer {

namespace iptables_text {  // named, not anonymous: IptablesSaveRules's parts hold its types

using model::Backend;

// Input a pass of the split parse goes through before handing its pages back
// (three passes run at once: the text check, the rule lines, the
// legacy-tables warning), and input the writer maps before handing it all back.
constexpr size_t kParseWindow = size_t{4} << 20;
constexpr size_t kWriterMapped = size_t{16} << 20;

struct Token {
  std::string_view text;  // unquoted, unescaped
  size_t begin = 0;       // raw extent in the line, quotes included
  size_t end = 0;
};

// The words of the line being parsed, their room kept line after line.
// (std::vector's push_back stayed an out-of-line call per word: 8% of an import.)
class Tokens {
 public:
  void clear() { size_ = 0; }
  void push_back(const Token& t) {
    if (size_ == room_.size()) room_.resize(2 * room_.size() + 32);
    room_[size_++] = t;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const Token* data() const { return room_.data(); }
  const Token& operator[](size_t i) const { return room_[i]; }

 private:
  std::vector<Token> room_;
  size_t size_ = 0;
};

// Internal linkage, so that the compiler inlines them into the parser.
namespace {

// `s` equals the literal: its length is known, so the comparison is inlined
// (operator== calls memcmp; the parser makes ~30 comparisons per rule).
template <size_t N>
bool is(std::string_view s, const char (&literal)[N]) {
  return s.size() == N - 1 && std::memcmp(s.data(), literal, N - 1) == 0;
}

// The first blank or quote in `line` at or after `i` (line.size() when none),
// eight bytes at a time: the tokenizer's inner loop over 50 MB of rules.
size_t word_end(std::string_view line, size_t i) {
  static_assert(std::endian::native == std::endian::little, "the byte scan reads words little-endian");
  constexpr uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  auto zero_bytes = [](uint64_t v) { return (v - ones) & ~v & high; };
  const size_t n = line.size();
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, line.data() + i, 8);
    // Little-endian: the lowest flagged byte is the first real match.
    const uint64_t hit = zero_bytes(w ^ (ones * ' ')) | zero_bytes(w ^ (ones * '\t')) | zero_bytes(w ^ (ones * '"'));
    if (hit) return i + static_cast<size_t>(__builtin_ctzll(hit) / 8);
  }
  while (i < n && line[i] != ' ' && line[i] != '\t' && line[i] != '"') ++i;
  return i;
}

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

bool is_number(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// An option word: "-x" or "--xyz", but not "-" alone or a negative number.
bool is_option(std::string_view s) {
  return s.size() >= 2 && s[0] == '-' && !(s[1] >= '0' && s[1] <= '9');
}

// The rule option `word` as the letter of its short form for the options
// iptables itself parses (-s, --source, ... -j, -c); '?' for another
// single-dash word; 0 for a long option of a match or target.
char basic_option(std::string_view word) {
  if (word[1] != '-') return word.size() == 2 ? word[1] : '?';
  if (is(word, "--source") || is(word, "--src")) return 's';
  if (is(word, "--destination") || is(word, "--dst")) return 'd';
  if (is(word, "--protocol")) return 'p';
  if (is(word, "--in-interface")) return 'i';
  if (is(word, "--out-interface")) return 'o';
  if (is(word, "--match")) return 'm';
  if (is(word, "--jump")) return 'j';
  if (is(word, "--goto")) return 'g';
  if (is(word, "--set-counters")) return 'c';
  if (is(word, "--fragment")) return 'f';
  if (is(word, "--ipv4")) return '4';
  if (is(word, "--ipv6")) return '6';
  return 0;
}

// A long option the protocol's match takes without "-m PROTO" before it
// (iptables loads the match; iptables-save prints it).
bool is_port_option(std::string_view word) {
  return is(word, "--dport") || is(word, "--destination-port") || is(word, "--sport") || is(word, "--source-port") ||
         is(word, "--tcp-flags") || is(word, "--syn") || is(word, "--tcp-option");
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

}  // namespace

// Chain name -> index, open addressing over views of names kept elsewhere: a
// 20k-service node has 120k chains and every rule looks one or two up, so
// one cache miss per lookup instead of a node walk matters.
class ChainIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  void clear() {
    slots_.assign(1024, Slot{});
    used_ = 0;
  }

  // Room for `n` keys without growing.
  void reserve(size_t n) {
    size_t size = std::max<size_t>(slots_.size(), 1024);
    while ((n + 1) * 2 > size) size *= 2;
    if (size != slots_.size()) rehash(size);
  }

  uint32_t find(std::string_view key) const { return find(key, hash(key)); }

  // Starts loading the slot `key` hashes to and returns the hash for find():
  // a lookup into a table of 120k chains is a cache miss, hidden this way
  // behind the work done until the answer is needed.
  uint64_t prefetch(std::string_view key) const {
    const uint64_t h = hash(key);
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & (slots_.size() - 1)]);
    return h;
  }

  uint32_t find(std::string_view key, uint64_t h) const {
    if (slots_.empty()) return kNone;
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      const Slot& s = slots_[i];
      if (s.value == kNone) return kNone;
      if (s.hash == h && s.value != kTombstone && s.key == key) return s.value;
    }
  }

  // `key` must stay valid while indexed and must not be present.
  void insert(std::string_view key, uint32_t value) { insert(key, hash(key), value); }
  void insert(std::string_view key, uint64_t h, uint32_t value) {
    if (slots_.empty()) clear();
    if ((used_ + 1) * 2 > slots_.size()) grow();
    place(Slot{h, key, value});
    ++used_;
  }

  bool empty() const { return used_ == 0; }

  void prefetch_hash(uint64_t h) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[h & (slots_.size() - 1)]);
  }

  static uint64_t hash(std::string_view key) { return std::hash<std::string_view>{}(key); }

  void erase(std::string_view key) {
    const uint64_t h = hash(key);
    for (size_t i = h & (slots_.size() - 1);; i = (i + 1) & (slots_.size() - 1)) {
      Slot& s = slots_[i];
      if (s.value == kNone) return;
      if (s.hash == h && s.value != kTombstone && s.key == key) {
        s.value = kTombstone;  // keeps the probe chains behind it intact
        return;
      }
    }
  }

 private:
  static constexpr uint32_t kTombstone = UINT32_MAX - 1;
  struct Slot {
    uint64_t hash = 0;
    std::string_view key;
    uint32_t value = kNone;
  };

  void place(const Slot& slot) {
    size_t i = slot.hash & (slots_.size() - 1);
    while (slots_[i].value != kNone) i = (i + 1) & (slots_.size() - 1);
    slots_[i] = slot;
  }

  void grow() { rehash(slots_.size() * 2); }

  void rehash(size_t size) {
    std::vector<Slot> old;
    old.reserve(size);
    populate_for_write(old.data(), size * sizeof(Slot));
    old.resize(size);
    old.swap(slots_);
    used_ = 0;
    for (const Slot& s : old) {
      if (s.value != kNone && s.value != kTombstone) {
        place(s);
        ++used_;
      }
    }
  }

  std::vector<Slot> slots_;
  size_t used_ = 0;  // live entries and tombstones
};

struct RuleScratch;

}  // namespace iptables_text

// One table the split path took: where each chain's "-A" lines are in the
// input, in the table's chain order (the writer asks by that index).
struct IptablesSaveRules::Table {
  struct Lines {
    uint64_t begin = 0, end = 0;  // whole lines of the input's text; empty when the chain has no rules
  };
  std::shared_ptr<const Input> input;
  model::Backend backend{};
  std::string family, name;
  std::vector<Lines> lines;
  std::unique_ptr<char[]> names;  // the chains' names, one after another
  std::vector<size_t> name_at;    // where each starts (and the end)
  iptables_text::ChainIndex index;  // name -> chain (keys: views of `names`), for a rule's jump
  // Built on the first chain not found at its index (the table's chains
  // were reordered after the parse).
  mutable std::once_flag by_name_once;
  mutable std::unordered_map<std::string_view, size_t> by_name;

  std::string_view chain_name(size_t i) const {
    return std::string_view(names.get() + name_at[i], name_at[i + 1] - name_at[i]);
  }
};

// One input file of the split path, kept until the snapshot is written.
struct IptablesSaveRules::Input {
  Input(std::shared_ptr<const model::FileBytes> b, std::string o, IptablesTextOptions opt)
      : bytes(std::move(b)), origin(std::move(o)), options(std::move(opt)) {}
  ~Input();
  std::shared_ptr<const model::FileBytes> bytes;
  std::string origin;
  IptablesTextOptions options;
  // What the writer's threads have mapped of the text, about (see write_chain_rules()).
  mutable std::atomic<uint64_t> mapped{0};
  // What the in-memory parser says of the whole input, asked once, when a
  // rule fails to parse as it is written.
  mutable std::once_flag reference_once;
  mutable std::exception_ptr reference_error;
  // Scratch parsers of the writer's threads, reused chain after chain.
  mutable std::mutex scratch_mu;
  mutable std::vector<std::unique_ptr<iptables_text::RuleScratch>> scratch;
};

namespace iptables_text {

class Parser {
 public:
  Parser(const std::string& origin, const IptablesTextOptions& options) : origin_(origin), options_(options) {}

  // Empty or comment-only text is a node without tables: what iptables-save
  // prints there (iptables-nft-save may print only its "legacy tables present"
  // warning).
  std::vector<model::Table> parse_save(std::string_view text) {
    if (text.empty()) return {};
    check_text(text, origin_);
    text_ = text;
    ledger_mode_ = has_delete_command(text);
    std::string_view line;
    while (next_line(text, line)) {
      if (table_structure(line)) continue;
      if (line[0] == ':') {
        if (!open_) fail("chain declaration before any table (no \"*table\" line before it)");
        chain_declaration(line);
      } else {
        if (!open_) {
          fail(line[0] == '-' || line[0] == '['
                   ? "rule before any table (no \"*table\" line before it)"
                   : "unexpected text outside a table: '" + excerpt(line) + "'");
        }
        command_line(line);
      }
    }
    if (open_) {
      fail("missing COMMIT for table '" + table_.name + "' opened at line " + std::to_string(table_line_) +
           " (file truncated?)");
    }
    return std::move(tables_);
  }

  // The split path of parse_iptables_save(..., rules, ...): the lines of
  // each table are walked here, its declarations read by declaration_block()
  // and its block of rule lines between them and COMMIT by find_rule_lines(),
  // which only finds each chain's lines: they are parsed as the snapshot is
  // written (IptablesSaveRules). False when the text is not iptables-save's
  // shape or has an error found here: the caller then runs parse_save(),
  // whose result and messages are the reference.
  bool parse_save_split(std::shared_ptr<const model::FileBytes> bytes, IptablesSaveRules& rules, size_t chunk_bytes) {
    const std::string_view text = bytes->view();
    input_ = std::make_shared<IptablesSaveRules::Input>(std::move(bytes), origin_, options_);
    text_ = text;  // before the helper, which hands pages of it back
    split_ = true;
    // Beside the parse, a helper checks the text (needed only at the end:
    // until then bad bytes just make some line fail to parse), in windows of
    // whole lines handed back behind it, so a mapped input is never resident whole.
    std::atomic<bool> text_ok{false};
    std::jthread helper([&] {
      try {
        for (size_t begin = 0; begin < text.size();) {
          size_t end = std::min(text.size(), begin + kParseWindow);
          if (end < text.size()) {
            const size_t nl = text.find('\n', end);
            end = nl == std::string_view::npos ? text.size() : nl + 1;
          }
          check_text(text.substr(begin, end - begin), origin_);
          release(begin, end);
          begin = end;
        }
        text_ok = true;
      } catch (...) {  // the in-memory parser reports it
      }
    });
    try {
      std::string_view line;
      while (next_line(text, line)) {
        if (table_structure(line)) continue;
        if (!open_) return false;
        const size_t begin = static_cast<size_t>(line.data() - text.data());
        // One block of declarations per table, its rules right after them:
        // anything else is not iptables-save's shape.
        if (line[0] != ':' || !table_.chains.empty()) return false;
        const std::vector<size_t> starts = declaration_starts(begin);
        FoundRuleLines rules;
        {
          std::jthread finder([&] { rules = find_rule_lines(starts.back(), starts.size() - 1, starts.back() - begin); });
          if (!declaration_block(starts, chunk_bytes)) return false;
        }
        if (!take_rule_lines(rules)) return false;
      }
      if (open_ || tables_.empty()) return false;
    } catch (const std::exception&) {  // InputError, or memory: the in-memory parser says which
      return false;
    }
    helper.join();
    if (!text_ok) return false;
    for (auto& t : split_tables_) rules.add(std::move(t));
    return true;
  }

  std::vector<model::Table> take_tables() { return std::move(tables_); }

  // Blank, comment, "*table" and COMMIT lines, the same for both parsers
  // (an error throws; the split path turns it into "parse in memory").
  // False when `line` is none of them: a chain declaration or a command.
  bool table_structure(std::string_view line) {
    if (line.empty()) return true;
    if (line[0] == '#') {
      if (starts_with(line, "# Generated by ")) header(line);
      return true;
    }
    if (line[0] == '*') {
      open_table(trim(line.substr(1)));
      return true;
    }
    if (is(line, "COMMIT") || trim(line) == "COMMIT") {
      if (!open_) fail("COMMIT without a table (no \"*table\" line before it)");
      commit();
      tables_.push_back(std::move(table_));
      open_ = false;
      return true;
    }
    return false;
  }

  model::Table parse_listing(std::string_view text, const std::string& table) {
    check_text(text, origin_);
    text_ = text;
    ledger_mode_ = has_delete_command(text);
    if (!model::is_iptables_table(table)) {
      throw InputError(origin_, 0, "unknown iptables table '" + table + "' (filter, nat, mangle, raw, security)");
    }
    start_table(table);
    table_.backend = options_.backend.value_or(Backend::IptablesNft);
    bool any = false;
    std::string_view line;
    while (next_line(text, line)) {
      if (line.empty() || line[0] == '#') continue;
      if (line[0] == '*' || line[0] == ':' || trim(line) == "COMMIT") {
        fail("this is iptables-save output, not `iptables -S`: pass it with --iptables-save");
      }
      command_line(line);
      any = true;
    }
    if (!any) fail("no -P, -N or -A line: not `iptables -S` output");
    commit();
    return std::move(table_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw InputError(origin_, line_no_, what); }

  // A line whose command is -D / --delete (blanks before it, as the
  // tokenizer allows). One scan; only restore input comes this way.
  static bool has_delete_command(std::string_view text) {
    for (size_t at = 0; at < text.size();) {
      while (at < text.size() && (text[at] == ' ' || text[at] == '\t')) ++at;
      const std::string_view rest = text.substr(at);
      for (std::string_view command : {"-D", "--delete"}) {
        if (starts_with(rest, command) && rest.size() > command.size() &&
            (rest[command.size()] == ' ' || rest[command.size()] == '\t')) {
          return true;
        }
      }
      const void* nl = std::memchr(text.data() + at, '\n', text.size() - at);
      if (!nl) break;
      at = static_cast<size_t>(static_cast<const char*>(nl) - text.data()) + 1;
    }
    return false;
  }

  RuleLedger& ledger_of(const model::Chain& chain) { return ledgers_.try_emplace(index_of(chain)).first->second; }

  // What -D rule-spec compares: the rule as the kernel holds it, so the words
  // are normalised the way iptables parses them. The basic IP fields (-s -d
  // -p -i -o -f) are one struct in the kernel's entry, their order in the
  // line does not matter; "-s 10.0.0.1" is 10.0.0.1/32; long forms are
  // short; counters are not part of a rule; the protocol's implicit match is
  // spelled out. Matches and target compare in order, their words as
  // written (iptables resolves e.g. service names: `--dport http` is not
  // `--dport 80` here). Words are separated by NUL, which text cannot hold.
  std::string rule_key(const Token* t, size_t n) {
    std::vector<std::string> basic;
    std::string rest;
    std::string protocol;
    bool negate = false, in_target = false, any_match = false, protocol_match = false;
    auto word_out = [&](std::string_view w) {
      rest += '\0';
      rest.append(w);
    };
    for (size_t i = 0; i < n; ++i) {
      const std::string_view word = t[i].text;
      if (is(word, "!")) {  // of the next option or word, written after an implicit match
        if (in_target) word_out(word);
        else negate = true;
        continue;
      }
      const char letter = is_option(word) ? basic_option(word) : 0;
      if (letter) {
        in_target = false;
        if (i + 1 < n && is(t[i + 1].text, "!")) {  // "-s ! 10.0.0.1"
          negate = true;
          ++i;
        }
        const std::string bang = negate ? "!" : "";
        negate = false;
        const std::string_view value = i + 1 < n ? t[i + 1].text : std::string_view();
        switch (letter) {
          case 's':
          case 'd': {
            std::string cidr(value);
            if (value.find('/') == std::string_view::npos) cidr += value.find(':') != std::string_view::npos ? "/128" : "/32";
            basic.push_back(bang + "-" + letter + " " + cidr);
            ++i;
            break;
          }
          case 'p': {
            std::string proto(value);
            std::transform(proto.begin(), proto.end(), proto.begin(),
                           [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
            if (!is(proto, "all") && !is(proto, "0")) {
              basic.push_back(bang + "-p " + proto);
              protocol = proto;
            }
            ++i;
            break;
          }
          case 'i':
          case 'o':
            basic.push_back(bang + "-" + letter + " " + std::string(value));
            ++i;
            break;
          case 'f':
            basic.push_back(bang + "-f");
            break;
          case 'c':
            i += 2;
            break;
          case 'm':
            any_match = true;
            if (value == protocol) protocol_match = true;
            word_out("-m");
            word_out(value);
            ++i;
            break;
          case 'j':
          case 'g':
            word_out(letter == 'j' ? "-j" : "-g");
            word_out(value);
            ++i;
            in_target = letter == 'j';
            break;
          default:  // -4, -6
            break;
        }
        continue;
      }
      if (is_option(word) && !in_target && !protocol_match && !protocol.empty() &&
          (!any_match || (is_port_option(word) && (protocol == "tcp" || protocol == "udp" || protocol == "sctp")))) {
        word_out("-m");
        word_out(protocol);
        any_match = protocol_match = true;
      }
      if (negate) word_out("!");
      negate = false;
      word_out(is(word, "--destination-port") ? "--dport" : is(word, "--source-port") ? "--sport" : word);
    }
    std::sort(basic.begin(), basic.end());
    std::string key;
    for (const auto& b : basic) {
      key += b;
      key += '\0';
    }
    key += '\1';
    return key + rest;
  }

  static std::string excerpt(std::string_view s) {
    return std::string(s.substr(0, 60)) + (s.size() > 60 ? "..." : "");
  }

  bool next_line(std::string_view text, std::string_view& line) {
    if (pos_ >= text.size()) return false;
    const char* start = text.data() + pos_;
    const void* nl = std::memchr(start, '\n', text.size() - pos_);
    const size_t len = nl ? static_cast<size_t>(static_cast<const char*>(nl) - start) : text.size() - pos_;
    line = std::string_view(start, len);
    pos_ += len + 1;
    ++line_no_;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return true;
  }

  // "# Generated by iptables-nft-save v1.8.9 (nf_tables) on ..." names the
  // program (hence the family) and the backend of the tables after it.
  void header(std::string_view line) {
    std::string_view rest = line.substr(std::strlen("# Generated by "));
    const std::string_view program = rest.substr(0, rest.find(' '));
    if (starts_with(program, "ip6tables") && is(options_.family, "ip")) {
      fail("this is ip6tables-save output: pass it with --ip6tables-save");
    }
    if (starts_with(program, "iptables") && is(options_.family, "ip6")) {
      fail("this is iptables-save (IPv4) output: pass it with --iptables-save");
    }
    Backend found;
    if (rest.find("(nf_tables)") != std::string_view::npos) {
      found = Backend::IptablesNft;
    } else {
      // "(legacy)" since 1.8; before 1.8 every iptables was legacy and the
      // header has no backend tag (1.8.9's iptables-legacy-save prints none either).
      found = Backend::IptablesLegacy;
    }
    if (options_.backend && *options_.backend != found) {
      fail(std::string("the header says ") + model::to_string(found) + " but the file was given as " +
           model::to_string(*options_.backend));
    }
    header_backend_ = found;
  }

  void start_table(const std::string& name) {
    table_ = model::Table{};
    table_.family = options_.family;
    table_.name = name;
    chain_index_.clear();
    removed_.clear();
    inserts_.clear();
    ledgers_.clear();
    last_chain_ = ChainIndex::kNone;
    table_line_ = line_no_;
  }

  void open_table(std::string_view name) {
    if (open_) {
      fail("table '" + std::string(name) + "' starts before COMMIT of table '" + table_.name + "' opened at line " +
           std::to_string(table_line_));
    }
    if (name.empty()) fail("\"*\" without a table name");
    if (!model::is_iptables_table(std::string(name))) {
      fail("unknown table '" + excerpt(name) + "' (iptables tables: filter, nat, mangle, raw, security)");
    }
    start_table(std::string(name));
    table_.backend = header_backend_ ? *header_backend_ : options_.backend.value_or(Backend::IptablesNft);
    for (const auto& t : tables_) {
      if (t.name == table_.name && t.backend == table_.backend) {
        fail("table '" + table_.name + "' appears twice in this file");
      }
    }
    open_ = true;
  }

  model::Chain* find(std::string_view name) {
    // Consecutive rules of one chain: the common case in iptables-save output.
    if (last_chain_ != ChainIndex::kNone && table_.chains[last_chain_].name == name) {
      return &table_.chains[last_chain_];
    }
    const uint32_t i = chain_index_.find(name);
    if (i == ChainIndex::kNone) return nullptr;
    last_chain_ = i;
    return &table_.chains[i];
  }

  // A view that outlives the table: the input text itself, or a kept copy
  // when the word was unquoted into the scratch buffer.
  std::string_view stable(std::string_view word) {
    if (word.data() >= text_.data() && word.data() + word.size() <= text_.data() + text_.size()) return word;
    return kept_names_.emplace_back(word);
  }

  model::Chain& add_chain(std::string_view name) {
    chain_index_.insert(stable(name), static_cast<uint32_t>(table_.chains.size()));
    table_.chains.emplace_back().name = std::string(name);
    removed_.push_back(0);
    return table_.chains.back();
  }

  // -X: the chain leaves the index now and the vector at commit(), so many
  // -X lines (a kube-proxy full resync) stay linear.
  void remove_chain(std::string_view name) {
    const uint32_t index = chain_index_.find(name);
    chain_index_.erase(name);
    removed_[index] = 1;
    table_.chains[index].rules.clear();
    inserts_.erase(index);
    ledgers_.erase(index);
    last_chain_ = ChainIndex::kNone;
  }

  static bool valid_chain_name(std::string_view name) {
    return !name.empty() && name.size() <= 28 && name[0] != '-' && name[0] != '!';
  }

  std::optional<model::BaseChain> builtin(std::string_view chain, const std::string& policy) const {
    // Built-in names are PREROUTING, INPUT, FORWARD, OUTPUT, POSTROUTING:
    // most chains (KUBE-...) are ruled out without building strings.
    if (chain.size() < 5 || chain.size() > 11 || model::hook_of_chain_name(std::string(chain)).empty()) {
      return std::nullopt;
    }
    return model::iptables_base_chain(table_.name, std::string(chain), policy);
  }

  // A built-in chain a rule or -P names without a ":CHAIN" line: it exists in
  // the kernel anyway (iptables-restore input often leaves them out).
  model::Chain& chain_for_rule(std::string_view name) {
    if (auto* c = find(name)) return *c;
    if (auto base = builtin(name, "ACCEPT")) {
      auto& c = add_chain(name);
      c.base = std::move(base);
      return c;
    }
    fail("chain '" + excerpt(name) + "' does not exist in table '" + table_.name + "' (no \":" + excerpt(name) +
         "\" or -N line before)");
  }

  static bool parse_counters(std::string_view s, model::Counters& out) {
    // "[packets:bytes]"
    if (s.size() < 5 || s.front() != '[' || s.back() != ']') return false;
    s = s.substr(1, s.size() - 2);
    const size_t colon = s.find(':');
    if (colon == std::string_view::npos) return false;
    return parse_u64(s.substr(0, colon), out.packets) && parse_u64(s.substr(colon + 1), out.bytes);
  }

  static bool parse_u64(std::string_view s, uint64_t& out) {
    if (!is_number(s)) return false;
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && p == s.data() + s.size();
  }

  // A ":NAME POLICY [packets:bytes]" line, read by both parsers.
  struct DeclarationLine {
    std::string_view name, policy;
    std::optional<model::Counters> counters;
    std::optional<model::BaseChain> base;  // set by declaration_policy()
  };

  // What the line alone can get wrong throws here.
  void read_declaration(std::string_view line, DeclarationLine& d) {
    tokenize(line.substr(1));
    if (tokens_.empty() || tokens_.size() > 3) fail("bad chain line: expected \":CHAIN POLICY [packets:bytes]\"");
    d.name = tokens_[0].text;
    if (!valid_chain_name(d.name)) fail("bad chain name '" + excerpt(d.name) + "'");
    d.policy = tokens_.size() > 1 ? tokens_[1].text : "-";
    d.counters.reset();
    if (tokens_.size() > 2) {
      model::Counters c;
      if (!parse_counters(tokens_[2].text, c)) fail("bad chain counters '" + excerpt(tokens_[2].text) + "'");
      d.counters = c;
    }
  }

  // The policy against the chain's kind: built-in chains take ACCEPT or DROP
  // ("-" is restore input for "keep the policy"; in a fresh table that is
  // ACCEPT), user-defined chains none.
  void declaration_policy(DeclarationLine& d) {
    d.base = builtin(d.name, is(d.policy, "-") ? "ACCEPT" : std::string(d.policy));
    if (d.base && !is(d.policy, "ACCEPT") && !is(d.policy, "DROP") && !is(d.policy, "-")) {
      fail("bad policy '" + excerpt(d.policy) + "' for built-in chain " + std::string(d.name) + " (ACCEPT or DROP)");
    }
    if (!d.base && !is(d.policy, "-")) {
      fail("user-defined chain '" + std::string(d.name) + "' cannot have a policy ('" + excerpt(d.policy) +
           "'); only built-in chains of table '" + table_.name + "' can");
    }
  }

  void chain_declaration(std::string_view line) {
    DeclarationLine d;
    read_declaration(line, d);
    if (table_.chains.empty()) {
      const size_t ahead = declarations_ahead();
      table_.chains.reserve(ahead);
      chain_index_.reserve(ahead);
    }
    prefetch_declaration_ahead();
    if (find(d.name)) fail("chain '" + std::string(d.name) + "' declared twice");
    declaration_policy(d);
    auto& c = add_chain(d.name);
    if (d.base) {
      c.base = std::move(d.base);
      c.policy_counters = d.counters;
    }
  }

  // Splits like iptables-restore's add_param_to_argv. Unquoted words are
  // views into the line; words with quotes are unescaped into scratch_, whose
  // capacity (>= the line) keeps earlier views valid.
  void tokenize(std::string_view line) {
    tokens_.clear();
    scratch_.clear();
    scratch_.reserve(line.size());
    const size_t n = line.size();
    size_t i = 0;
    while (i < n) {
      while (i < n && (line[i] == ' ' || line[i] == '\t')) ++i;
      if (i >= n) break;
      const size_t start = i;
      i = word_end(line, i);
      if (i >= n || line[i] != '"') {
        tokens_.push_back({std::string_view(line.data() + start, i - start), start, i});  // in range: no substr() check
        continue;
      }
      if (i == start) {  // a plain "..." word (kube-proxy's comments): its text is in the line already
        const void* close = std::memchr(line.data() + i + 1, '"', n - i - 1);
        if (close != nullptr) {
          const size_t end = static_cast<size_t>(static_cast<const char*>(close) - line.data());
          if ((end + 1 == n || line[end + 1] == ' ' || line[end + 1] == '\t') &&
              std::memchr(line.data() + i + 1, '\\', end - i - 1) == nullptr) {
            tokens_.push_back({std::string_view(line.data() + i + 1, end - i - 1), start, end + 1});
            i = end + 1;
            continue;
          }
        }
      }
      const size_t from = scratch_.size();
      scratch_.append(line.data() + start, i - start);
      bool quoted = false;
      for (; i < n; ++i) {
        if (quoted) {
          size_t run = i;  // copied up to the next quote or backslash in one go
          while (run < n && line[run] != '"' && line[run] != '\\') ++run;
          scratch_.append(line.data() + i, run - i);
          i = run;
          if (i >= n) break;
          if (line[i] == '\\' && i + 1 < n) {
            scratch_.push_back(line[++i]);
          } else if (line[i] == '"') {
            quoted = false;
          } else {
            scratch_.push_back(line[i]);
          }
          continue;
        }
        const char c = line[i];
        if (c == '"') {
          quoted = true;
        } else if (c == ' ' || c == '\t') {
          break;
        } else {
          scratch_.push_back(c);
        }
      }
      if (quoted) fail("unterminated quote");
      tokens_.push_back({std::string_view(scratch_.data() + from, scratch_.size() - from), start, i});
    }
  }

  // A command line: [packets:bytes] -A CHAIN rule..., -I, -D, -N, -X, -F, -P, -Z.
  void command_line(std::string_view line) {
    tokenize(line);
    if (tokens_.empty()) return;
    size_t first = 0;
    std::optional<model::Counters> counters;
    if (tokens_[0].text.front() == '[' && tokens_[0].begin == 0 && line[0] == '[') {
      model::Counters c;
      if (!parse_counters(tokens_[0].text, c)) fail("bad rule counters '" + excerpt(tokens_[0].text) + "'");
      counters = c;
      first = 1;
    }
    if (first >= tokens_.size()) fail("counters without a rule");
    const std::string_view cmd = tokens_[first].text;
    const size_t n = tokens_.size() - first;
    const Token* t = tokens_.data() + first;
    auto chain_arg = [&]() -> std::string_view {
      if (n < 2 || is_option(t[1].text)) fail(std::string(cmd) + " needs a chain name");
      if (!valid_chain_name(t[1].text)) fail("bad chain name '" + excerpt(t[1].text) + "'");
      return t[1].text;
    };
    if (is(cmd, "-A") || is(cmd, "--append")) {
      const std::string_view name = chain_arg();
      auto& chain = chain_for_rule(name);
      if (ledger_mode_) {
        model::Rule rule;
        rule.counters = counters;
        parse_rule(name, t + 2, n - 2, line, rule);
        auto& ledger = ledger_of(chain);
        ledger.insert(ledger.size() + 1, std::move(rule), rule_key(t + 2, n - 2));
        return;
      }
      auto pending = inserts_.find(index_of(chain));
      if (pending != inserts_.end()) {  // after an -I: in order with the inserts
        model::Rule rule;
        rule.counters = counters;
        parse_rule(name, t + 2, n - 2, line, rule);
        pending->second.push_back({static_cast<uint32_t>(rule_total(chain) + 1), std::move(rule)});
        return;
      }
      if (chain.rules.empty()) chain.rules.reserve(rules_ahead(name));
      model::Rule& rule = chain.rules.emplace_back();
      rule.counters = counters;
      parse_rule(name, t + 2, n - 2, line, rule);
    } else if (is(cmd, "-I") || is(cmd, "--insert")) {
      const std::string_view name = chain_arg();
      auto& chain = chain_for_rule(name);
      const size_t total = rule_total(chain);
      size_t skip = 2;
      uint64_t pos = 1;
      if (n > 2 && is_number(t[2].text)) {
        if (!parse_u64(t[2].text, pos) || pos == 0 || pos > total + 1) {
          fail("-I position " + std::string(t[2].text) + " out of range (chain has " + std::to_string(total) +
               " rules)");
        }
        skip = 3;
      }
      model::Rule rule;
      rule.counters = counters;
      parse_rule(name, t + skip, n - skip, line, rule);
      if (ledger_mode_) {
        ledger_of(chain).insert(pos, std::move(rule), rule_key(t + skip, n - skip));
        return;
      }
      // Inserting into the vector is O(rules) each, so 20k `-I INPUT 1` took
      // seconds: the inserts are kept with their positions and placed at
      // commit() in O(n log n).
      inserts_[index_of(chain)].push_back({static_cast<uint32_t>(pos), std::move(rule)});
    } else if (counters) {
      fail("counters before '" + excerpt(cmd) + "': only rules carry counters");
    } else if (is(cmd, "-D") || is(cmd, "--delete")) {
      const std::string_view name = chain_arg();
      auto& ledger = ledger_of(chain_for_rule(name));  // ledger_mode_: the text has this -D
      if (n == 3 && is_number(t[2].text)) {
        uint64_t pos = 0;
        if (!parse_u64(t[2].text, pos) || pos == 0 || pos > ledger.size()) {
          fail("-D position " + std::string(t[2].text) + " out of range (chain has " + std::to_string(ledger.size()) +
               " rules; iptables-restore fails here too)");
        }
        ledger.erase_at(pos);
        return;
      }
      if (n < 3) fail("-D " + std::string(name) + " needs a rule number or a rule");
      model::Rule rule;
      parse_rule(name, t + 2, n - 2, line, rule);  // checked as for -A
      if (!ledger.erase_first(rule_key(t + 2, n - 2))) {
        fail("-D: no rule in chain '" + std::string(name) +
             "' matches this one (iptables-restore fails here too: \"does a matching rule exist in that chain?\")");
      }
    } else if (is(cmd, "-N") || is(cmd, "--new-chain")) {
      const auto name = chain_arg();
      if (n > 2) fail("unexpected '" + excerpt(t[2].text) + "' after -N " + std::string(name));
      if (find(name) || builtin(name, "ACCEPT")) fail("chain '" + std::string(name) + "' already exists");
      add_chain(name);
    } else if (is(cmd, "-X") || is(cmd, "--delete-chain")) {
      if (n == 1) {
        // Every user-defined chain of the table.
        for (size_t i = 0; i < table_.chains.size(); ++i) {
          if (!table_.chains[i].base && !removed_[i]) remove_chain(table_.chains[i].name);
        }
        return;
      }
      const auto name = chain_arg();
      if (n > 2) fail("unexpected '" + excerpt(t[2].text) + "' after -X " + std::string(name));
      const auto* c = find(name);
      if (!c) fail("-X: chain '" + std::string(name) + "' does not exist");
      if (c->base) fail("-X: cannot delete built-in chain " + std::string(name));
      remove_chain(name);
    } else if (is(cmd, "-F") || is(cmd, "--flush")) {
      if (n == 1) {
        for (auto& c : table_.chains) c.rules.clear();
        inserts_.clear();
        ledgers_.clear();
        return;
      }
      const auto name = chain_arg();
      if (n > 2) fail("unexpected '" + excerpt(t[2].text) + "' after -F " + std::string(name));
      auto& chain = chain_for_rule(name);
      chain.rules.clear();
      inserts_.erase(index_of(chain));
      ledgers_.erase(index_of(chain));
    } else if (is(cmd, "-P") || is(cmd, "--policy")) {
      const auto name = chain_arg();
      if (n < 3) fail("-P " + std::string(name) + " needs a policy (ACCEPT or DROP)");
      const std::string policy(t[2].text);
      if (!is(policy, "ACCEPT") && !is(policy, "DROP")) fail("bad policy '" + excerpt(policy) + "' (ACCEPT or DROP)");
      auto base = builtin(name, policy);
      if (!base) fail("-P: '" + std::string(name) + "' is not a built-in chain of table '" + table_.name + "'");
      std::optional<model::Counters> policy_counters;
      if (n == 6 && (is(t[3].text, "-c") || is(t[3].text, "--set-counters"))) {
        model::Counters c;
        if (!parse_u64(t[4].text, c.packets) || !parse_u64(t[5].text, c.bytes)) fail("bad -c counters");
        policy_counters = c;
      } else if (n != 3) {
        fail("unexpected '" + excerpt(t[3].text) + "' after -P " + std::string(name) + " " + policy);
      }
      auto& chain = chain_for_rule(name);
      chain.base = std::move(base);
      chain.policy_counters = policy_counters;
    } else if (is(cmd, "-Z") || is(cmd, "--zero")) {
      // Zeroing counters changes nothing a snapshot records.
    } else if (is_option(cmd)) {
      fail("unsupported command '" + excerpt(cmd) + "' (expected -A, -I, -D, -N, -X, -F, -P or -Z)");
    } else {
      fail("unexpected line '" + excerpt(line) + "'");
    }
  }

  // Declarations come by the hundred thousand and each one's index slot is a
  // cache miss: start loading the slot of the one 8 lines ahead.
  void prefetch_declaration_ahead() {
    if (declaration_ahead_ < pos_) {
      declaration_ahead_ = pos_;
      for (int k = 0; k < 7; ++k) next_declaration_ahead();
    }
    next_declaration_ahead();
  }
  void next_declaration_ahead() {
    const size_t p = declaration_ahead_;
    if (p >= text_.size() || text_[p] != ':') return;
    const void* nl = std::memchr(text_.data() + p, '\n', text_.size() - p);
    const size_t end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) : text_.size();
    const std::string_view line = text_.substr(p + 1, end - p - 1);
    chain_index_.prefetch(line.substr(0, line.find(' ')));
    declaration_ahead_ = end + 1;
  }

  // How many ":CHAIN" lines follow the current one, plus it: iptables-save
  // declares a table's chains together (120k of them on a 20k-service node).
  size_t declarations_ahead() const {
    size_t n = 1;
    for (size_t p = pos_; p < text_.size() && text_[p] == ':'; ++n) {
      const void* nl = std::memchr(text_.data() + p, '\n', text_.size() - p);
      if (!nl) break;
      p = static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
    }
    return n;
  }

  // How many lines from the current one on append to `chain`: iptables-save
  // prints a chain's rules together, so one exact reservation replaces the
  // vector's repeated growth (a large share of a 20k-service import).
  size_t rules_ahead(std::string_view chain) const {
    size_t n = 1;
    size_t p = pos_;
    while (p < text_.size()) {
      std::string_view rest = text_.substr(p);
      if (!rest.empty() && rest[0] == '[') {
        const size_t close = rest.find("] ");
        if (close == std::string_view::npos || close > 48) break;
        rest.remove_prefix(close + 2);
      }
      if (rest.size() < chain.size() + 4 || rest.substr(0, 3) != "-A " || rest.substr(3, chain.size()) != chain ||
          rest[3 + chain.size()] != ' ') {
        break;
      }
      ++n;
      const void* nl = std::memchr(text_.data() + p, '\n', text_.size() - p);
      if (!nl) break;
      p = static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1;
    }
    return n;
  }

  // `value` as the CIDR iptables-save prints, into `cidr` (its memory reused).
  void address(std::string_view option, std::string_view value, std::string& cidr) {
    if (value.empty()) fail(std::string(option) + " needs an address");
    if (value.find(',') != std::string_view::npos) {
      fail("several addresses in " + std::string(option) + " '" + excerpt(value) +
           "': iptables-restore expands them into several rules; import iptables-save output instead");
    }
    const bool v6 = value.find(':') != std::string_view::npos;
    if (v6 && is(options_.family, "ip")) {
      fail("IPv6 address '" + excerpt(value) + "' in IPv4 iptables text: pass ip6tables output with --ip6tables-save");
    }
    if (!v6 && is(options_.family, "ip6")) {
      fail("IPv4 address '" + excerpt(value) + "' in ip6tables text: pass iptables output with --iptables-save");
    }
    cidr.assign(value);
    // iptables-save prints a host as /32 (/128); restore input may leave it out.
    if (value.find('/') == std::string_view::npos) cidr += v6 ? "/128" : "/32";
  }

  // The rule options after "-A CHAIN". Fills the match summary; the verdict
  // kind of "-j NAME" is settled in commit(), once every chain is known.
  // `chain`: the rule's chain, for its text ("-A CHAIN" + the options as given, counters left out).
  void parse_rule(std::string_view chain, const Token* t, size_t n, std::string_view line, model::Rule& rule) {
    auto& m = rule.match;
    size_t counters_begin = 0, counters_end = 0;  // "-c P B" inside the line: not part of the text
    modules_.clear();
    bool negate = false;
    bool target_seen = false;
    bool in_target = false;       // long options now belong to the -j target
    bool have_port_match = false; // tcp/udp/sctp match loaded
    bool have_multiport = false;
    bool have_comment = false;
    bool comment_set = false;
    bool dport_set = false;
    bool args_started = false;    // target options seen: target_args = their raw text
    size_t args_begin = 0, args_end = 0, bang_begin = 0;
    std::string_view previous_option;

    auto need = [&](size_t i, size_t count) {
      if (i + count >= n) fail("option " + std::string(t[i].text) + " needs an argument");
      for (size_t k = 1; k <= count; ++k) {
        if (is(t[i + k].text, "!")) fail("misplaced '!' after " + std::string(t[i].text));
      }
    };
    auto take_negation = [&](size_t& i) {
      // Old "intrapositioned" form: "-s ! 10.0.0.1".
      if (i + 1 < n && is(t[i + 1].text, "!")) {
        negate = true;
        ++i;
      }
    };
    auto no_negation = [&](std::string_view option) {
      if (negate) fail("'!' is not allowed before " + std::string(option));
    };

    for (size_t i = 0; i < n; ++i) {
      const std::string_view word = t[i].text;
      if (is(word, "!")) {
        if (negate) fail("double '!'");
        negate = true;
        bang_begin = t[i].begin;
        continue;
      }
      if (!is_option(word)) {
        std::string what = "unexpected '" + excerpt(word) + "' where an option was expected";
        if (is(previous_option, "--comment")) {
          what += ": a comment with spaces must be quoted (iptables-restore rejects this line too)";
        }
        fail(what);
      }
      previous_option = word;
      if (const char letter = basic_option(word)) {
        in_target = false;
        switch (letter) {
          case 's':
          case 'd': {
            take_negation(i);
            need(i, 1);
            auto& prefix = letter == 's' ? m.source : m.destination;
            if (!prefix) prefix.emplace();
            address(word, t[i + 1].text, prefix->cidr);
            prefix->negated = negate;
            ++i;
            break;
          }
          case 'p': {
            take_negation(i);
            need(i, 1);
            std::string& proto = m.protocol;
            proto.assign(t[i + 1].text);
            std::transform(proto.begin(), proto.end(), proto.begin(),
                           [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; });
            // "all" and 0 mean any protocol; iptables-save prints nothing for them.
            if (is(proto, "all") || is(proto, "0")) {
              if (negate) fail("'! -p all' matches nothing");
              proto.clear();
            }
            m.protocol_negated = negate;
            ++i;
            break;
          }
          case 'i':
          case 'o':
            take_negation(i);
            need(i, 1);
            ++i;
            break;
          case 'm':
            no_negation(word);
            need(i, 1);
            modules_.push_back(t[i + 1].text);
            if (is(t[i + 1].text, "tcp") || is(t[i + 1].text, "udp") || is(t[i + 1].text, "sctp")) have_port_match = true;
            if (is(t[i + 1].text, "multiport")) have_multiport = true;
            if (is(t[i + 1].text, "comment")) have_comment = true;
            ++i;
            break;
          case 'j':
          case 'g':
            no_negation(word);
            need(i, 1);
            if (target_seen) fail("a rule has one target: second " + std::string(word));
            if (is_option(t[i + 1].text)) fail(std::string(word) + " needs a target name");
            target_seen = true;
            rule.target.assign(t[i + 1].text);
            // Settled in commit(): jump to a chain, a verdict or an extension target.
            rule.verdict_kind = letter == 'g' ? "goto" : "jump";
            ++i;
            in_target = letter == 'j';
            break;
          case 'c':
            no_negation(word);
            need(i, 2);
            {
              model::Counters c;
              if (!parse_u64(t[i + 1].text, c.packets) || !parse_u64(t[i + 2].text, c.bytes)) {
                fail("bad counters after " + std::string(word));
              }
              rule.counters = c;
            }
            counters_begin = t[i].begin;
            counters_end = t[i + 2].end;
            i += 2;
            break;
          case 'f':
          case '4':
          case '6':
            break;
          default:
            fail("unknown option '" + excerpt(word) + "'");
        }
        negate = false;
        continue;
      }

      // A long option of a match (-m, or the protocol's implicit match) or of the target.
      if (!in_target && modules_.empty() && m.protocol.empty()) {
        fail("option '" + excerpt(word) + "' belongs to no match or target (missing -m MATCH before it?)");
      }
      const size_t option_begin = negate ? bang_begin : t[i].begin;
      take_negation(i);
      size_t j = i + 1;
      if (!in_target && is(word, "--comment") && have_comment && !comment_set) {
        no_negation(word);
        need(i, 1);
        m.comment.assign(t[i + 1].text);
        comment_set = true;
        i += 1;
        negate = false;
        continue;
      }
      const bool port_option = is_port_option(word);
      if (!in_target && port_option && !have_port_match &&
          (is(m.protocol, "tcp") || is(m.protocol, "udp") || is(m.protocol, "sctp"))) {
        // iptables loads the protocol's match implicitly; iptables-save prints it.
        modules_.push_back(m.protocol);
        have_port_match = true;
      }
      if (!in_target && !dport_set &&
          (((is(word, "--dport") || is(word, "--destination-port")) && have_port_match) ||
           ((is(word, "--dports") || is(word, "--destination-ports")) && have_multiport))) {
        need(i, 1);
        m.dport.assign(t[i + 1].text);
        m.dport_negated = negate;
        dport_set = true;
        j = i + 2;
      } else {
        // Any other option: its arguments are the words up to the next option.
        while (j < n) {
          if (is(t[j].text, "!")) {
            if (j + 1 < n && !is_option(t[j + 1].text)) {
              j += 2;
              continue;
            }
            break;
          }
          if (is_option(t[j].text)) break;
          ++j;
        }
      }
      if (in_target) {
        if (!args_started) {
          args_begin = option_begin;
          args_started = true;
        }
        args_end = t[j - 1].end;
      }
      i = j - 1;
      negate = false;
    }
    if (negate) fail("'!' at the end of the rule");
    // One exact allocation per rule: growing the vector word by word was a
    // measurable share of a large import.
    m.modules.assign(modules_.begin(), modules_.end());
    if (args_started) rule.target_args.assign(trim(line.substr(args_begin, args_end - args_begin)));
    rule_text(chain, n ? line.substr(t[0].begin) : std::string_view(), counters_begin, counters_end, line, rule.text);
  }

  // iptables-save's line for the rule: "-A CHAIN" and the options, as given
  // (which is how iptables-save printed them), without a "-c P B".
  static void rule_text(std::string_view chain, std::string_view options, size_t counters_begin, size_t counters_end,
                        std::string_view line, std::string& out) {
    out.assign("-A ");
    out.append(chain);
    if (counters_end > counters_begin) {
      const size_t from = static_cast<size_t>(options.data() - line.data());
      std::string_view before = trim(line.substr(from, counters_begin - from));
      std::string_view after = trim(line.substr(counters_end));
      if (!before.empty()) out.append(" ").append(before);
      if (!after.empty()) out.append(" ").append(after);
      return;
    }
    options = trim(options);
    if (!options.empty()) out.append(" ").append(options);
  }

  // ---- the split path: declarations on several threads, rules as written ----

  // "-A NAME ..." (after optional "[p:b] " counters) -> NAME; "" otherwise.
  static std::string_view appended_chain(std::string_view line) {
    if (!line.empty() && line[0] == '[') {
      const size_t close = line.find("] ");
      if (close == std::string_view::npos || close > 48) return {};
      line.remove_prefix(close + 2);
    }
    if (!is(line.substr(0, 3), "-A ")) return {};
    line.remove_prefix(3);
    return line.substr(0, line.find(' '));
  }

  // Chain `i`'s name in the names block of declaration_block() (a table without declarations has no chains).
  std::string_view chain_name(size_t i) const {
    return std::string_view(chain_names_.get() + chain_name_at_[i], chain_name_at_[i + 1] - chain_name_at_[i]);
  }

  // Hands text_[begin, end) back (a mapped input's pages) once the parse is done with it.
  void release(size_t begin, size_t end) const { input_->bytes->release(text_.substr(begin, end - begin)); }

  // The "-A" lines right after a table's declarations, up to the first line
  // that is not one: runs of one chain's lines, found (on a helper, while the
  // declarations are read) before the chains are known.
  struct LineRun {
    size_t name_at = 0, name_size = 0;  // the chain's name in FoundRuleLines::names
    size_t begin = 0, end = 0;          // whole lines
    uint32_t rules = 0;
  };
  struct FoundRuleLines {
    std::vector<LineRun> runs;
    // The runs' chain names, copied: read again from the text, they would map
    // it all back in (in kube-proxy's restore order a chain's lines are anywhere).
    std::string names;
    size_t end = 0;    // where the next line (COMMIT) starts
    size_t lines = 0;  // lines read, blank ones too
    bool ok = false;   // false: a line to leave to the in-memory parser
  };

  // Nothing but each line's chain is read here: the lines are parsed when
  // the snapshot is written, where a line let through here that the
  // in-memory parser refuses fails the write with that parser's message. So
  // only the plain form "[p:b] -A CHAIN ..." is let through, whose first
  // words tokenize() splits the same way.
  // `chains` and `declared_bytes`: of the declarations before, which bound
  // the runs and their names (more runs than chains is not iptables-save's shape).
  FoundRuleLines find_rule_lines(size_t begin, size_t chains, size_t declared_bytes) const {
    FoundRuleLines found;
    try {
      found.runs.reserve(chains);  // no doubling: 350k runs at 1M rules
      found.names.reserve(declared_bytes);
      std::string_view run_name;  // of the last run, in the text
      size_t at = begin, released = begin;
      while (at < text_.size()) {
        const void* nl = std::memchr(text_.data() + at, '\n', text_.size() - at);
        const size_t next = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1 : text_.size();
        std::string_view line = text_.substr(at, next - at);
        if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        if (!line.empty()) {
          if (line[0] != '-' && line[0] != '[') break;  // COMMIT, or what the main loop refuses
          if (line[0] == '[') {
            model::Counters k;
            const size_t close = line.find("] ");
            if (close == std::string_view::npos || !parse_counters(line.substr(0, close + 1), k)) return found;
          }
          const std::string_view name = appended_chain(line);
          if (found.runs.empty() || name != run_name) {
            // A name tokenize() would cut elsewhere, or that -A refuses.
            if (!valid_chain_name(name) || name.find_first_of("\t\"") != std::string_view::npos) return found;
            if (found.runs.size() == chains) return found;
            found.runs.push_back({found.names.size(), name.size(), at, next, 0});
            found.names.append(name);
            run_name = name;
          }
          ++found.runs.back().rules;
          found.runs.back().end = next;
        }
        ++found.lines;
        at = next;
        if (at - released >= kParseWindow) {
          release(released, at);
          released = at;
        }
      }
      release(released, at);
      found.end = at;
      found.ok = true;
    } catch (const std::exception&) {  // memory: the in-memory parser says so
    }
    return found;
  }

  // The runs of find_rule_lines() made the table's chains' lines. False when
  // a chain is unknown or its lines are in two places (restore input).
  bool take_rule_lines(const FoundRuleLines& found) {
    if (!found.ok) return false;
    const size_t n = table_.chains.size();
    chain_lines_.assign(n, {});
    uint32_t chain = ChainIndex::kNone;
    for (const LineRun& run : found.runs) {
      const std::string_view name(found.names.data() + run.name_at, run.name_size);
      // iptables-save prints the chains in the order declaration_block()
      // made them in: most often the next one (its name is in the names
      // block, beside this one's), else a lookup.
      const uint32_t next = chain == ChainIndex::kNone ? 0 : chain + 1;
      chain = next < n && chain_name(next) == name ? next : chain_index_.find(name);
      if (chain == ChainIndex::kNone || chain_lines_[chain].end != 0) return false;
      chain_lines_[chain] = {run.begin, run.end};
      table_.chains[chain].rule_count = run.rules;
    }
    pos_ = found.end;
    line_no_ += found.lines;
    return true;
  }

  // A chain declaration of the split path, before it becomes a model::Chain:
  // 40 bytes, sorted as they are (120k of them at 20k services).
  struct Declaration {
    uint64_t key_high = 0, key_low = 0;  // the name's first 16 bytes, big-endian: sorts as the name does
    uint64_t hash = 0;                   // ChainIndex's, computed on the reading thread
    uint32_t line = 0;                   // index into the block's line starts
    uint32_t name_offset = 0;            // of the name within its line
    uint16_t name_size = 0;
    bool base = false;
  };

  static uint64_t name_word(std::string_view s, size_t at) {
    uint64_t w = 0;
    for (size_t k = 0; k < 8; ++k) w = w << 8 | (at + k < s.size() ? static_cast<unsigned char>(s[at + k]) : 0);
    return w;
  }


  // The starts of the ":CHAIN" lines from `begin` on, and the end of the last.
  std::vector<size_t> declaration_starts(size_t begin) const {
    std::vector<size_t> starts;
    size_t end = begin;
    while (end < text_.size() && text_[end] == ':') {
      starts.push_back(end);
      const void* nl = std::memchr(text_.data() + end, '\n', text_.size() - end);
      end = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text_.data()) + 1 : text_.size();
    }
    starts.push_back(end);
    return starts;
  }

  // A table's ":CHAIN" lines (`starts`), read on several threads and
  // made into the table's chains directly in canonical order (base chains in
  // hook order, then by name), so nothing is reordered after the rules.
  bool declaration_block(const std::vector<size_t>& starts, size_t chunk_bytes) {
    const size_t begin = starts.front(), end = starts.back();
    const size_t n = starts.size() - 1;
    if (n >= UINT32_MAX) return false;
    auto line_of = [&](size_t i) {
      std::string_view line = text_.substr(starts[i], starts[i + 1] - starts[i]);
      if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      return line;
    };
    std::vector<Declaration> declarations(n);
    const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
    const size_t parts = std::clamp<size_t>((end - begin) / std::max<size_t>(chunk_bytes, 1), 1, threads);
    std::vector<char> ok(parts, 0);
    auto read_part = [&](size_t k) {
      try {
        Parser p(origin_, options_);
        p.table_.name = table_.name;
        DeclarationLine d;
        for (size_t i = n * k / parts; i < n * (k + 1) / parts; ++i) {
          const std::string_view line = line_of(i);
          p.read_declaration(line, d);
          p.declaration_policy(d);
          // A name with escapes is not a view of the text (index keys must be).
          if (d.name.data() < line.data() || d.name.data() >= line.data() + line.size()) return;
          declarations[i] = Declaration{name_word(d.name, 0), name_word(d.name, 8), ChainIndex::hash(d.name),
                                        static_cast<uint32_t>(i), static_cast<uint32_t>(d.name.data() - line.data()),
                                        static_cast<uint16_t>(d.name.size()), d.base.has_value()};
        }
        ok[k] = 1;
      } catch (const std::exception&) {
      }
    };
    {
      std::vector<std::jthread> pool;
      for (size_t k = 1; k < parts; ++k) pool.emplace_back(read_part, k);
      read_part(0);
    }
    if (std::find(ok.begin(), ok.end(), 0) != ok.end()) return false;
    auto name_of = [&](const Declaration& d) { return text_.substr(starts[d.line] + d.name_offset, d.name_size); };

    // Canonical order: the few base chains by model::chain_order_less, the
    // rest by name (16 bytes as integers first).
    const auto user = std::stable_partition(declarations.begin(), declarations.end(),
                                            [](const Declaration& d) { return d.base; });
    auto by_name = [&](const Declaration& x, const Declaration& y) {
      if (x.key_high != y.key_high) return x.key_high < y.key_high;
      if (x.key_low != y.key_low) return x.key_low < y.key_low;
      return name_of(x) < name_of(y);
    };
    const size_t bases = static_cast<size_t>(user - declarations.begin());
    std::vector<model::Chain>& chains = table_.chains;
    // iptables-save prints them in name order: checked in one pass, sorted only when not.
    if (!std::is_sorted(user, declarations.end(), by_name)) std::sort(user, declarations.end(), by_name);
    chains.reserve(n);
    populate_for_write(chains.data(), n * sizeof(model::Chain));  // 25 MB at 120k chains
    chains.resize(n);
    DeclarationLine d;
    for (size_t i = 0; i < bases; ++i) {  // re-read: counters and policy are kept for base chains only
      read_declaration(line_of(declarations[i].line), d);
      declaration_policy(d);
      chains[i].name.assign(d.name);
      chains[i].base = std::move(d.base);
      chains[i].policy_counters = d.counters;
    }
    std::sort(chains.begin(), chains.begin() + static_cast<std::ptrdiff_t>(bases), model::chain_order_less);
    // A chain declared twice: neighbours once sorted.
    for (size_t i = 1; i < bases; ++i) {
      if (chains[i].name == chains[i - 1].name) return false;
    }
    const auto same_name = [&](const Declaration& x, const Declaration& y) {
      return x.key_high == y.key_high && x.key_low == y.key_low && name_of(x) == name_of(y);
    };
    if (std::adjacent_find(user, declarations.end(), same_name) != declarations.end()) return false;
    // Names: into the chains, and into one block for the writer's chain list
    // and the chain index (hand_over_rule_lines()), half on another thread
    // while this one indexes them (the index takes the block's views, not its bytes).
    size_t name_bytes = 0;
    std::vector<size_t> name_at(n + 1);
    for (size_t i = 0; i < n; ++i) {
      name_at[i] = name_bytes;
      name_bytes += i < bases ? chains[i].name.size() : declarations[i].name_size;
    }
    name_at[n] = name_bytes;
    chain_names_ = std::make_unique<char[]>(name_bytes + 1);
    auto copy_names = [&](size_t from, size_t to) {
      for (size_t i = from; i < to; ++i) {
        if (i >= bases) chains[i].name.assign(name_of(declarations[i]));
        std::memcpy(chain_names_.get() + name_at[i], chains[i].name.data(), chains[i].name.size());
      }
    };
    {
      std::jthread other(copy_names, n / 2, n);
      chain_index_.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        if (i + 8 < n) chain_index_.prefetch_hash(declarations[i + 8].hash);
        // Index keys are views that outlive the table: the names block, kept for the writer.
        const std::string_view name(chain_names_.get() + name_at[i], name_at[i + 1] - name_at[i]);
        chain_index_.insert(name, i < bases ? ChainIndex::hash(chains[i].name) : declarations[i].hash,
                            static_cast<uint32_t>(i));
      }
      copy_names(0, n / 2);
    }
    removed_.assign(n, 0);
    chain_name_at_ = std::move(name_at);
    pos_ = end;
    return true;
  }

  // Clears a rule for reuse without giving its strings' memory back.
  static void clear_rule(model::Rule& r) {
    auto& m = r.match;
    m.source.reset();
    m.destination.reset();
    m.protocol.clear();
    m.protocol_negated = false;
    m.dport.clear();
    m.dport_negated = false;
    m.comment.clear();
    r.position = 0;
    r.verdict_kind = "none";
    r.target.clear();
    r.target_args.clear();
    r.counters.reset();
  }

 public:
  // One "-A" line that find_rule_lines() let through, parsed into `rule` as the
  // snapshot is written (by a scratch parser of the writer's thread): the
  // words as the in-memory parser reads them, the jump settled by the
  // table's `index`. Throws InputError where that parser would fail.
  void parse_written_rule(std::string_view line, std::string_view chain, const ChainIndex& index,
                          model::Rule& rule) {
    tokenize(line);
    size_t first = 0;
    std::optional<model::Counters> counters;
    if (line[0] == '[') {
      model::Counters k;
      if (tokens_.empty() || !parse_counters(tokens_[0].text, k)) fail("bad rule counters");
      counters = k;
      first = 1;
    }
    const Token* t = tokens_.data() + first;
    const size_t n = tokens_.size() - first;
    if (n < 2 || !is(t[0].text, "-A") || t[1].text != chain) fail("not the line the split parse found");
    // The jump's target is one of the last two, or its index slot loads while the rule is parsed.
    std::string_view jump_to;
    uint64_t jump_hash = 0;
    const KnownTarget* known = nullptr;
    for (size_t k = 2; k + 1 < n; ++k) {
      if (is(t[k].text, "-j") || is(t[k].text, "--jump")) {
        jump_to = t[k + 1].text;
        known = known_target(index, jump_to);
        if (known == nullptr) jump_hash = index.prefetch(jump_to);
        break;
      }
    }
    clear_rule(rule);
    rule.counters = counters;
    parse_rule(chain, t + 2, n - 2, line, rule);
    if (is(rule.verdict_kind, "jump")) {
      if (known != nullptr && rule.target == jump_to) return settle_jump(rule, known->is_chain);
      const uint32_t target = rule.target == jump_to ? index.find(jump_to, jump_hash) : index.find(rule.target);
      settle_jump(rule, target != ChainIndex::kNone);
      remember_target(index, rule.target, target != ChainIndex::kNone);
    }
  }

 private:
  // Jump targets written last and whether each is a chain of the table: a
  // KUBE-SEP chain's two rules jump to KUBE-MARK-MASQ and DNAT (100k times
  // at 20k Services), and a lookup in a table of 120k chains is a cache miss.
  struct KnownTarget {
    const ChainIndex* index = nullptr;
    std::string name;
    bool is_chain = false;
    uint64_t used = 0;  // when last asked for
  };
  std::array<KnownTarget, 2> known_targets_;
  uint64_t target_asks_ = 0;

  const KnownTarget* known_target(const ChainIndex& index, std::string_view name) {
    for (auto& k : known_targets_) {
      if (k.index == &index && k.name == name) {
        k.used = ++target_asks_;
        return &k;
      }
    }
    return nullptr;
  }
  void remember_target(const ChainIndex& index, std::string_view name, bool is_chain) {
    KnownTarget& k = known_targets_[0].used <= known_targets_[1].used ? known_targets_[0] : known_targets_[1];
    k.index = &index;
    k.name.assign(name);
    k.is_chain = is_chain;
    k.used = ++target_asks_;
  }

  // "-j NAME": a verdict, a jump to a chain of the table, or an extension target.
  static void settle_jump(model::Rule& rule, bool chain_exists) {
    const std::string& name = rule.target;
    if (is(name, "ACCEPT") || is(name, "DROP") || is(name, "RETURN") || is(name, "QUEUE")) {
      rule.verdict_kind = "verdict";
    } else if (!chain_exists) {
      rule.verdict_kind = "target";
    }
  }

  // The table's rule lines for IptablesSaveRules, chain by chain in the
  // table's order (canonical since declaration_block()), with its chain
  // names and the index over them (a rule's jump is settled as it is written).
  void hand_over_rule_lines() {
    const size_t n = table_.chains.size();
    auto t = std::make_unique<IptablesSaveRules::Table>();
    t->input = input_;
    t->backend = table_.backend;
    t->family = table_.family;
    t->name = table_.name;
    chain_lines_.resize(n);
    t->lines = std::move(chain_lines_);
    if (chain_name_at_.size() != n + 1) {  // a table without declarations (and so without rules)
      chain_name_at_.assign(1, 0);
      for (const auto& c : table_.chains) chain_name_at_.push_back(chain_name_at_.back() + c.name.size());
      chain_names_ = std::make_unique<char[]>(chain_name_at_.back() + 1);
      for (size_t i = 0; i < n; ++i) {
        std::memcpy(chain_names_.get() + chain_name_at_[i], table_.chains[i].name.data(), table_.chains[i].name.size());
      }
      chain_index_.clear();
    }
    t->names = std::move(chain_names_);
    t->name_at = std::move(chain_name_at_);
    t->index = std::move(chain_index_);
    for (size_t i = 0; i < n && t->index.empty(); ++i) t->index.insert(t->chain_name(i), static_cast<uint32_t>(i));
    split_tables_.push_back(std::move(t));
    chain_lines_.clear();
    chain_name_at_.clear();
    chain_index_.clear();
  }

  struct PendingInsert {
    uint32_t position;  // 1-based, in the chain as it was when inserted
    model::Rule rule;
  };

  uint32_t index_of(const model::Chain& chain) const { return static_cast<uint32_t>(&chain - table_.chains.data()); }

  // Rules of a chain, the pending inserts included.
  size_t rule_total(const model::Chain& chain) const {
    if (ledger_mode_) {
      auto it = ledgers_.find(index_of(chain));
      return it == ledgers_.end() ? 0 : it->second.size();
    }
    auto it = inserts_.find(index_of(chain));
    return chain.rules.size() + (it == inserts_.end() ? 0 : it->second.size());
  }

  // The chain's rules after its inserts, each made at a position of the chain
  // as it was then. Backwards, the last insert at position p takes the p-th
  // free slot of the final order, the one before it the p-th slot still free,
  // and so on: a Fenwick tree of free slots finds each in O(log n).
  static void place_inserts(std::vector<model::Rule>& rules, std::vector<PendingInsert>& inserts) {
    const size_t first = rules.size(), total = first + inserts.size();
    std::vector<uint32_t> tree(total + 1, 0);  // counts of free slots, 1-based
    for (size_t i = 1; i <= total; ++i) {
      tree[i] += 1;
      if (const size_t up = i + (i & (~i + 1)); up <= total) tree[up] += tree[i];
    }
    size_t top = 1;
    while (top * 2 <= total) top *= 2;
    auto take_kth_free = [&](uint32_t k) {
      size_t at = 0;
      for (size_t step = top; step > 0; step /= 2) {
        if (at + step <= total && tree[at + step] < k) {
          at += step;
          k -= tree[at];
        }
      }
      const size_t slot = at + 1;
      for (size_t i = slot; i <= total; i += i & (~i + 1)) tree[i] -= 1;
      return slot - 1;
    };
    std::vector<model::Rule> placed(total);
    for (size_t j = inserts.size(); j-- > 0;) placed[take_kth_free(inserts[j].position)] = std::move(inserts[j].rule);
    // The rules there before the first insert were appended in order: positions 1..first.
    for (size_t j = first; j-- > 0;) placed[take_kth_free(static_cast<uint32_t>(j + 1))] = std::move(rules[j]);
    rules = std::move(placed);
  }

  // Settles jump vs verdict vs target, numbers the rules.
  void commit() {
    for (auto& [chain, ledger] : ledgers_) table_.chains[chain].rules = ledger.take();
    ledgers_.clear();
    for (auto& [chain, inserts] : inserts_) place_inserts(table_.chains[chain].rules, inserts);
    inserts_.clear();
    if (std::find(removed_.begin(), removed_.end(), 1) != removed_.end()) {
      std::vector<model::Chain> kept;
      kept.reserve(table_.chains.size());
      for (size_t i = 0; i < table_.chains.size(); ++i) {
        if (!removed_[i]) kept.push_back(std::move(table_.chains[i]));
      }
      table_.chains = std::move(kept);
      chain_index_.clear();
      removed_.assign(table_.chains.size(), 0);
      last_chain_ = ChainIndex::kNone;
      for (size_t i = 0; i < table_.chains.size(); ++i) {
        chain_index_.insert(stable(table_.chains[i].name), static_cast<uint32_t>(i));
      }
    }
    for (auto& chain : table_.chains) {
      uint32_t position = 0;
      for (auto& rule : chain.rules) {
        rule.position = ++position;
        if (is(rule.verdict_kind, "jump")) settle_jump(rule, find(rule.target) != nullptr);
      }
      if (!split_) chain.rule_count = chain.rules.size();  // split: counted by take_rule_lines()
      chain.rules_recorded = true;
    }
    if (split_) hand_over_rule_lines();
  }

  const std::string& origin_;
  const IptablesTextOptions& options_;
  size_t declaration_ahead_ = 0;  // prefetch_declaration_ahead()'s line
  bool split_ = false;  // parse_save_split: rule lines are found, not parsed
  std::shared_ptr<IptablesSaveRules::Input> input_;                    // split: the text, kept for the writer
  std::vector<IptablesSaveRules::Table::Lines> chain_lines_;             // split: per chain of table_, its -A lines
  std::vector<std::unique_ptr<IptablesSaveRules::Table>> split_tables_;  // split: the tables done
  std::unique_ptr<char[]> chain_names_;          // split: table_'s chain names, one after another
  std::vector<size_t> chain_name_at_;            // where each starts (and the end)
  size_t pos_ = 0;
  size_t line_no_ = 0;
  std::optional<Backend> header_backend_;
  bool open_ = false;
  size_t table_line_ = 0;
  model::Table table_;
  ChainIndex chain_index_;
  std::vector<char> removed_;  // per chain: deleted by -X
  std::unordered_map<uint32_t, std::vector<PendingInsert>> inserts_;  // by chain index: -I (and -A after it)
  // The text has -D lines: every chain's rules are edited in a RuleLedger.
  bool ledger_mode_ = false;
  std::unordered_map<uint32_t, RuleLedger> ledgers_;  // by chain index
  uint32_t last_chain_ = ChainIndex::kNone;
  std::string_view text_;
  std::deque<std::string> kept_names_;
  std::vector<model::Table> tables_;
  Tokens tokens_;
  std::vector<std::string_view> modules_;  // -m names of the rule being parsed
  std::string scratch_;
};

// What a writer's thread parses and renders a chain's rules with.
struct RuleScratch {
  explicit RuleScratch(const IptablesSaveRules::Input& input) : parser(input.origin, input.options) {}
  Parser parser;
  model::Rule rule;
  model::RuleLines lines;
  uint64_t last_end = 0;  // of the chain parsed last
};

// A scratch from `input`'s pool for one chain, given back however the chain ends.
class ScratchLease {
 public:
  explicit ScratchLease(const IptablesSaveRules::Input& input) : input_(input) {
    {
      std::lock_guard lock(input.scratch_mu);
      if (!input.scratch.empty()) {
        scratch_ = std::move(input.scratch.back());
        input.scratch.pop_back();
        return;
      }
    }
    scratch_ = std::make_unique<RuleScratch>(input);
  }
  ~ScratchLease() {
    std::lock_guard lock(input_.scratch_mu);
    input_.scratch.push_back(std::move(scratch_));
  }
  ScratchLease(const ScratchLease&) = delete;
  ScratchLease& operator=(const ScratchLease&) = delete;
  RuleScratch* operator->() const { return scratch_.get(); }

 private:
  const IptablesSaveRules::Input& input_;
  std::unique_ptr<RuleScratch> scratch_;
};

// A rule failed to parse as it was written: the error is the in-memory
// parser's for the whole input (its first bad line, its message), found once.
[[noreturn]] void throw_reference_error(const IptablesSaveRules::Input& input) {
  std::call_once(input.reference_once, [&input] {
    try {
      Parser(input.origin, input.options).parse_save(input.bytes->view());
    } catch (const InputError&) {
      input.reference_error = std::current_exception();
    }
  });
  if (input.reference_error) std::rethrow_exception(input.reference_error);
  throw std::logic_error(input.origin + ": a rule the in-memory parser reads failed to parse as it was written "
                                        "(a dpscope bug)");
}

// Parses chain `i`'s lines of `table` and, given a sink, renders them into
// it a piece at a time (a chain of one rule per Service is megabytes).
void write_chain_rules(const IptablesSaveRules::Table& table, size_t i,
                       const std::function<void(std::string_view)>* sink) {
  static constexpr size_t kPiece = size_t{1} << 20;
  const IptablesSaveRules::Input& input = *table.input;
  const std::string_view text = input.bytes->view();
  const size_t begin = table.lines[i].begin, end = table.lines[i].end;
  const std::string_view chain = table.chain_name(i);
  ScratchLease scratch(input);
  model::RuleLines& lines = scratch->lines;
  lines.clear();
  lines.start_chain();
  try {
    uint32_t position = 0;
    for (size_t at = begin; at < end;) {
      const void* nl = std::memchr(text.data() + at, '\n', end - at);
      const size_t size = nl ? static_cast<size_t>(static_cast<const char*>(nl) - text.data()) - at : end - at;
      std::string_view line = text.substr(at, size);
      at += size + 1;
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.empty()) continue;
      scratch->parser.parse_written_rule(line, chain, table.index, scratch->rule);
      scratch->rule.position = ++position;
      if (sink == nullptr) continue;
      lines.add(scratch->rule);
      if (lines.size() >= kPiece) {
        (*sink)(lines.view());
        lines.clear();
      }
    }
  } catch (const InputError&) {
    throw_reference_error(input);
  }
  if (sink != nullptr && lines.size() > 0) (*sink)(lines.view());
  // The chains are written in their order, not the input's (kube-proxy's
  // restore order groups them by Service), so what the writer maps of the
  // input grows by the lines it reads and by up to 64 KiB (the kernel maps
  // the pages around a fault) each time it goes somewhere else in the input.
  // Every kWriterMapped of that, all of it is handed back; what is still to
  // come is mapped again from the page cache.
  static constexpr uint64_t kFaultAround = 64 << 10;
  const uint64_t mapped = (end - begin) + (begin != scratch->last_end ? kFaultAround : 0);
  scratch->last_end = end;
  const uint64_t before = input.mapped.fetch_add(mapped, std::memory_order_relaxed);
  if (before / kWriterMapped != (before + mapped) / kWriterMapped) input.bytes->release(text);
}

}  // namespace iptables_text

IptablesSaveRules::Input::~Input() = default;

IptablesSaveRules::IptablesSaveRules() = default;
IptablesSaveRules::~IptablesSaveRules() = default;
IptablesSaveRules::IptablesSaveRules(IptablesSaveRules&&) noexcept = default;
IptablesSaveRules& IptablesSaveRules::operator=(IptablesSaveRules&&) noexcept = default;

void IptablesSaveRules::add(std::unique_ptr<Table> table) { tables_.push_back(std::move(table)); }

void IptablesSaveRules::merge(IptablesSaveRules&& other) {
  for (auto& t : other.tables_) tables_.push_back(std::move(t));
  other.tables_.clear();
}

const IptablesSaveRules::Table* IptablesSaveRules::find_table(const model::Table& table) const {
  for (const auto& t : tables_) {
    if (t->backend == table.backend && t->family == table.family && t->name == table.name) return t.get();
  }
  return nullptr;
}

bool IptablesSaveRules::write_to(const model::Table& table, size_t chain_index, const model::Chain& chain,
                                 const std::function<void(std::string_view)>& sink) const {
  const Table* t = find_table(table);
  if (t == nullptr) return false;
  size_t i = chain_index;
  if (i >= t->lines.size() || t->chain_name(i) != chain.name) {
    std::call_once(t->by_name_once, [t] {
      for (size_t k = 0; k < t->lines.size(); ++k) t->by_name.emplace(t->chain_name(k), k);
    });
    const auto found = t->by_name.find(chain.name);
    if (found == t->by_name.end()) return false;
    i = found->second;
  }
  if (t->lines[i].begin == t->lines[i].end) return false;
  iptables_text::write_chain_rules(*t, i, &sink);
  return true;
}

void IptablesSaveRules::check() const {
  // On every core, a run of chains at a time, as the writer would.
  static constexpr size_t kRun = 1024;
  for (const auto& t : tables_) {
    std::atomic<size_t> next{0};
    std::mutex failure_mu;
    std::exception_ptr failure;
    auto work = [&] {
      try {
        for (size_t from; (from = next.fetch_add(kRun)) < t->lines.size();) {
          for (size_t i = from; i < std::min(from + kRun, t->lines.size()); ++i) {
            if (t->lines[i].begin != t->lines[i].end) iptables_text::write_chain_rules(*t, i, nullptr);
          }
        }
      } catch (...) {
        std::lock_guard lock(failure_mu);
        if (!failure) failure = std::current_exception();
        next = t->lines.size();
      }
    };
    {
      std::vector<std::jthread> pool;
      const size_t threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 8);
      for (size_t k = 1; k < std::min(threads, t->lines.size() / kRun + 1); ++k) pool.emplace_back(work);
      work();
    }
    if (failure) std::rethrow_exception(failure);
  }
}

std::vector<model::Table> parse_iptables_save(std::string_view text, const std::string& origin,
                                              const IptablesTextOptions& options) {
  return iptables_text::Parser(origin, options).parse_save(text);
}

std::vector<model::Table> parse_iptables_save(std::shared_ptr<const model::FileBytes> text, const std::string& origin,
                                              const IptablesTextOptions& options, IptablesSaveRules& rules,
                                              size_t chunk_bytes) {
  {
    iptables_text::Parser split(origin, options);
    if (split.parse_save_split(text, rules, chunk_bytes)) return split.take_tables();
  }
  return iptables_text::Parser(origin, options).parse_save(text->view());
}

model::Table parse_iptables_rules_listing(std::string_view text, const std::string& origin,
                                          const std::string& table, const IptablesTextOptions& options) {
  return iptables_text::Parser(origin, options).parse_listing(text, table);
}

}  // namespace dpscope::importer
