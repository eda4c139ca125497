#include "model/snapshot_writer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>


#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <unordered_map>

#include "model/compression.h"
#include "model/output_file.h"
#include "model/json.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/fd.h"

namespace dpscope::model {

namespace {

// The bytes of the 8 at p that may need escaping (a control character, '"',
// '\\' or non-ASCII), one high bit each, 0 when none does. Word-at-a-time
// tests: a byte above a flagged one may be flagged falsely (a borrow), the
// lowest flag is always true.
uint64_t special8(const char* p) {
  uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
  auto has_zero = [](uint64_t v) { return (v - ones) & ~v & high; };
  return (w & high) | has_zero(w & 0x6060606060606060ULL) | has_zero(w ^ (ones * '"')) | has_zero(w ^ (ones * '\\'));
}

// Bytes of the valid UTF-8 sequence at s[i], 0 when invalid.
size_t utf8_length(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  size_t n = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

// Room escape_to() may need for `s`: "\u00XX" is 6 bytes for one.
size_t max_escaped(std::string_view s) { return 6 * s.size() + 2; }

// `s` as a JSON string at `out`, the way nlohmann escapes: ", \ and control
// characters; UTF-8 passes through (invalid bytes become U+FFFD, where
// nlohmann would refuse to dump). Returns the end.
char* escape_to(char* out, std::string_view s) {
  *out++ = '"';
  size_t start = 0;
  auto copy_run = [&](size_t end) {
    std::memcpy(out, s.data() + start, end - start);
    out += end - start;
  };
  for (size_t i = 0; i < s.size();) {
    if (i + 8 <= s.size()) {
      const uint64_t special = special8(s.data() + i);
      if (special == 0) {  // eight bytes that need no escaping
        i += 8;
        continue;
      }
      // Little-endian: straight to the first byte that may need it.
      i += static_cast<size_t>(__builtin_ctzll(special) / 8);
    }
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {  // the common case: copied in runs
      ++i;
      continue;
    }
    if (c == '"' || c == '\\') {  // the quotes of a rule's text (kube-proxy's comments)
      copy_run(i);
      *out++ = '\\';
      *out++ = static_cast<char>(c);
      start = ++i;
      continue;
    }
    const char* esc = nullptr;
    char buf[8];
    size_t len = 1;
    if (c == '\b') esc = "\\b";
    else if (c == '\f') esc = "\\f";
    else if (c == '\n') esc = "\\n";
    else if (c == '\r') esc = "\\r";
    else if (c == '\t') esc = "\\t";
    else if (c < 0x20) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      esc = buf;
    } else {
      len = utf8_length(s, i);
      if (len == 0) {
        esc = "\xEF\xBF\xBD";
        len = 1;
      }
    }
    if (esc) {
      copy_run(i);
      const size_t n = std::strlen(esc);
      std::memcpy(out, esc, n);
      out += n;
      start = i + len;
    }
    i += len;
  }
  copy_run(s.size());
  *out++ = '"';
  return out;
}

// Emits JSON the way nlohmann::json::dump(1) does, or, inside inline(), as
// dump() does (no whitespace). Callers write the keys of each object in
// sorted order (nlohmann's objects are std::maps), so the content equals
// to_json()'s.
class Writer {
 public:
  explicit Writer(std::FILE* out) : out_(out) { buf_.reserve(kChunk + 4096); }
  // Renders into `buffer`'s memory (emptied, capacity kept): a reused buffer
  // costs no fresh pages.
  Writer(std::FILE* out, std::string&& buffer) : out_(out), buf_(std::move(buffer)) { buf_.clear(); }
  ~Writer() = default;

  // Appends to a chunk written out with one fwrite per ~1 MiB.
  void raw(std::string_view s) {
    buf_.append(s);
    if (buf_.size() >= kChunk) flush();
  }
  // Text rendered elsewhere: a large piece goes straight to the file.
  void text_block(std::string_view s) {
    if (out_ == nullptr || s.size() < kChunk / 4) return raw(s);
    flush();
    write_out(s);
  }
  // Without a FILE the text stays in the buffer (text()).
  void flush() {
    if (out_ == nullptr) return;
    if (!buf_.empty()) write_out(buf_);
    buf_.clear();
  }
  // To the file's descriptor itself when it has one: through stdio's buffer
  // the text was copied once more (133 MB at 20k Services).
  void write_out(std::string_view s) {
    const int fd = ::fileno(out_);
    if (fd < 0) {  // a compressor or a memory stream
      if (std::fwrite(s.data(), 1, s.size(), out_) != s.size()) throw SystemError("writing the snapshot", errno);
      return;
    }
    if (std::fflush(out_) != 0) throw SystemError("writing the snapshot", errno);
    if (const int err = write_all(fd, s.data(), s.size())) throw SystemError("writing the snapshot", err);
  }
  void indent(int level) {
    if (inline_) return;
    buf_ += '\n';
    buf_.append(static_cast<size_t>(level), ' ');
  }
  // nlohmann's escaping (escape_to() below).
  void string(std::string_view s) {
    const size_t at = buf_.size();
    buf_.resize(at + max_escaped(s));
    buf_.resize(static_cast<size_t>(escape_to(buf_.data() + at, s) - buf_.data()));
    if (buf_.size() >= kChunk) flush();
  }
  template <typename Int>
  void number(Int v) {
    char b[24];
    const auto r = std::to_chars(b, b + sizeof b, v);
    buf_.append(b, static_cast<size_t>(r.ptr - b));
  }
  void boolean(bool v) { buf_ += v ? "true" : "false"; }

  // Object/array framing with dump(1)'s layout.
  void open(char c, int level) {
    raw(std::string_view(&c, 1));
    level_ = level;
    first_ = true;
  }
  // Keys are our own ASCII names: no escaping needed.
  void key(std::string_view k, int level) {
    if (!first_) buf_ += ',';
    first_ = false;
    indent(level);
    buf_ += '"';
    buf_.append(k);
    buf_ += inline_ ? "\":" : "\": ";
  }
  void item(int level) {
    if (!first_) buf_ += ',';
    first_ = false;
    indent(level);
  }
  void close(char c, int level, bool empty) {
    if (!empty) indent(level);
    raw(std::string_view(&c, 1));
    first_ = false;
  }
  // Everything written until end_inline() goes on the current line.
  void begin_inline() { inline_ = true; }
  void end_inline() {
    inline_ = false;
    if (buf_.size() >= kChunk) flush();
  }
  std::string& text() { return buf_; }
  bool first_ = true;

 private:
  static constexpr size_t kChunk = 1 << 20;
  std::FILE* out_;
  std::string buf_;
  int level_ = 0;
  bool inline_ = false;
};

// Each write_* starts at the current position and nests at `level`.
void write_counters(Writer& w, const Counters& c, int level) {
  w.open('{', level);
  w.key("bytes", level + 1), w.number(c.bytes);
  w.key("packets", level + 1), w.number(c.packets);
  w.close('}', level, false);
}

void write_strings(Writer& w, const std::vector<std::string>& v, int level) {
  w.open('[', level);
  for (const auto& s : v) w.item(level + 1), w.string(s);
  w.close(']', level, v.empty());
}

// A small DOM value (declarations: a few per table) in the writer's layout.
void write_value(Writer& w, const nlohmann::json& v, int level) {
  if (v.is_object()) {
    w.open('{', level);
    for (const auto& [k, x] : v.items()) w.key(k, level + 1), write_value(w, x, level + 1);
    w.close('}', level, v.empty());
  } else if (v.is_array()) {
    w.open('[', level);
    for (const auto& x : v) w.item(level + 1), write_value(w, x, level + 1);
    w.close(']', level, v.empty());
  } else if (v.is_string()) {
    w.string(v.get_ref<const std::string&>());
  } else {
    w.raw(v.dump());
  }
}

// Room render_rule() may need for `r`: its strings escaped at worst, plus
// keys, braces and numbers.
size_t max_rule_text(const Rule& r) {
  const auto& m = r.match;
  size_t n = 512 + max_escaped(m.comment) + max_escaped(m.dport) + max_escaped(m.protocol) + max_escaped(r.raw) +
             max_escaped(r.target) + max_escaped(r.target_args) + max_escaped(r.text) + max_escaped(r.verdict_kind);
  if (m.source) n += max_escaped(m.source->cidr);
  if (m.destination) n += max_escaped(m.destination->cidr);
  for (const auto& module : m.modules) n += max_escaped(module) + 1;
  return n;
}

// A rule is one compact line: keys in sorted order, no whitespace -- the
// layout of the framing calls above inside begin_inline(), which
// SnapshotWriter tests hold to nlohmann's. Written through a raw pointer into
// room made for it once (a 20k-service node has 350k rules). Returns the end.
char* render_rule(char* o, const Rule& r) {
  auto lit = [&o](std::string_view s) {
    std::memcpy(o, s.data(), s.size());
    o += s.size();
  };
  auto num = [&o](uint64_t v) { o = std::to_chars(o, o + 20, v).ptr; };
  auto str = [&o](std::string_view s) { o = escape_to(o, s); };
  const auto& m = r.match;
  if (r.counters) {
    lit("{\"counters\":{\"bytes\":");
    num(r.counters->bytes);
    lit(",\"packets\":");
    num(r.counters->packets);
    lit("},\"match\":{");
  } else {
    lit("{\"match\":{");
  }
  bool first = true;
  auto key = [&](std::string_view quoted_key) {
    if (!first) *o++ = ',';
    first = false;
    lit(quoted_key);
  };
  auto prefix = [&](const Prefix& p) {
    lit("{\"cidr\":");
    str(p.cidr);
    lit(p.negated ? ",\"negated\":true}" : ",\"negated\":false}");
  };
  if (!m.comment.empty()) key("\"comment\":"), str(m.comment);
  if (m.destination) key("\"destination\":"), prefix(*m.destination);
  if (!m.dport.empty()) {
    key("\"dport\":"), str(m.dport);
    if (m.dport_negated) key("\"dport_negated\":true");
  }
  if (!m.modules.empty()) {
    key("\"modules\":[");
    for (size_t i = 0; i < m.modules.size(); ++i) {
      if (i) *o++ = ',';
      str(m.modules[i]);
    }
    *o++ = ']';
  }
  if (!m.protocol.empty()) {
    key("\"protocol\":"), str(m.protocol);
    if (m.protocol_negated) key("\"protocol_negated\":true");
  }
  if (m.source) key("\"source\":"), prefix(*m.source);
  lit("},\"position\":");
  num(r.position);
  if (r.undecoded) lit(",\"raw\":"), str(r.raw);
  if (!r.target.empty()) lit(",\"target\":"), str(r.target);
  if (!r.target_args.empty()) lit(",\"target_args\":"), str(r.target_args);
  if (!r.text.empty()) lit(",\"text\":"), str(r.text);
  if (r.undecoded) lit(",\"undecoded\":true");
  lit(",\"verdict_kind\":");
  str(r.verdict_kind);
  *o++ = '}';
  return o;
}

void write_rule(Writer& w, const Rule& r, int /*level*/) {
  std::string& b = w.text();
  const size_t at = b.size();
  b.resize(at + max_rule_text(r));
  b.resize(static_cast<size_t>(render_rule(b.data() + at, r) - b.data()));
  w.first_ = false;
  w.end_inline();
}

// Rules are items at this depth: tables (3) > chains (5) > rules (7).
constexpr int kRuleLevel = 7;

// Where a table's chains may find rendered rules.
struct TableContext {
  const RuleText* rule_text = nullptr;
  const Table* table = nullptr;
};

void write_chain(Writer& w, const Chain& c, size_t index, int level, const TableContext& ctx) {
  w.open('{', level);
  if (c.base) {
    const int bl = level + 1;
    w.key("base", bl);
    w.open('{', bl);
    if (!c.base->devices.empty()) w.key("devices", bl + 1), write_strings(w, c.base->devices, bl + 1);
    w.key("hook", bl + 1), w.string(c.base->hook);
    if (c.base->offload) w.key("offload", bl + 1), w.boolean(true);
    w.key("policy", bl + 1), w.string(c.base->policy);
    w.key("priority", bl + 1), w.number(c.base->priority);
    w.key("type", bl + 1), w.string(c.base->type);
    w.close('}', bl, false);
  }
  if (c.comment) w.key("comment", level + 1), w.string(*c.comment);
  if (c.handle) w.key("handle", level + 1), w.number(c.handle);
  w.key("name", level + 1), w.string(c.name);
  if (c.policy_counters) w.key("policy_counters", level + 1), write_counters(w, *c.policy_counters, level + 1);
  w.key("rule_count", level + 1), w.number(c.rule_count);
  w.key("rules", level + 1);
  w.open('[', level + 1);
  bool empty = c.rules.empty();
  if (empty && c.rule_count > 0 && ctx.rule_text &&
      ctx.rule_text->write_to(*ctx.table, index, c, [&w](std::string_view text) { w.text_block(text); })) {
    empty = false;  // lines rendered by RuleLines at kRuleLevel
    w.first_ = false;
  }
  for (const auto& r : c.rules) w.item(level + 2), write_rule(w, r, level + 2);
  w.close(']', level + 1, empty);
  w.key("rules_recorded", level + 1), w.boolean(c.rules_recorded);
  w.close('}', level, false);
}

void write_set(Writer& w, const NftSet& s, int level) {
  w.open('{', level);
  w.key("comment", level + 1), w.string(s.comment);
  w.key("data_type", level + 1), w.string(s.data_type);
  if (s.declaration) w.key("declaration", level + 1), write_value(w, set_declaration_json(*s.declaration), level + 1);
  if (s.elements_unread.empty()) w.key("element_count", level + 1), w.number(s.element_count);
  w.key("elements", level + 1);
  w.open('[', level + 1);
  for (const auto& e : s.elements) {
    const int el = level + 2;
    w.item(el);
    w.begin_inline();
    w.open('{', el);
    if (!e.comment.empty()) w.key("comment", el + 1), w.string(e.comment);
    w.key("key", el + 1), w.string(e.key);
    if (!e.statements.empty()) w.key("statements", el + 1), w.string(e.statements);
    if (!e.timeout.empty()) w.key("timeout", el + 1), w.string(e.timeout);
    if (!e.value.empty()) w.key("value", el + 1), w.string(e.value);
    w.close('}', el, false);
    w.end_inline();
  }
  w.close(']', level + 1, s.elements.empty());
  w.key("elements_recorded", level + 1), w.boolean(s.elements_recorded);
  if (!s.elements_undecoded.empty()) w.key("elements_undecoded", level + 1), w.string(s.elements_undecoded);
  if (!s.elements_unread.empty()) w.key("elements_unread", level + 1), w.string(s.elements_unread);
  if (s.handle) w.key("handle", level + 1), w.number(s.handle);
  w.key("is_map", level + 1), w.boolean(s.is_map);
  w.key("key_type", level + 1), write_strings(w, s.key_type, level + 1);
  w.key("name", level + 1), w.string(s.name);
  w.close('}', level, false);
}

// A table's chains as the items of its "chains" array. A large table (a
// 20k-service node's nat table has 120k chains) is rendered in slices on
// several threads, each into its own buffer, and written in order.
void write_chains(Writer& w, const Table& t, int level, const TableContext& ctx) {
  static constexpr size_t kSlice = 2048;       // chains per slice at most
  static constexpr uint64_t kSliceRules = 1024;  // and rules: a slice's text is held until written
  const size_t n = t.chains.size();
  const size_t threads = std::min<size_t>(std::max(1U, std::thread::hardware_concurrency()), 8);
  if (n < 4 * kSlice || threads == 1) {
    for (size_t i = 0; i < n; ++i) w.item(level), write_chain(w, t.chains[i], i, level, ctx);
    return;
  }
  // Slices end at kSlice chains or kSliceRules rules, whichever comes first:
  // 2048 KUBE-SVC chains of 10 rules each would be 12 MB of text.
  // A long chain (KUBE-SERVICES: one rule per Service) is a slice of its
  // own, written by this thread straight from its source: rendered into a
  // slice it would be held whole.
  std::vector<size_t> cuts{0};
  std::vector<bool> direct;
  for (size_t i = 0, chains = 0, rules = 0; i < n; ++i) {
    if (t.chains[i].rule_count >= kSliceRules) {
      if (chains > 0) cuts.push_back(i), direct.push_back(false);
      cuts.push_back(i + 1), direct.push_back(true);
      chains = rules = 0;
      continue;
    }
    ++chains;
    rules += t.chains[i].rule_count;
    if (chains == kSlice || rules >= kSliceRules) {
      cuts.push_back(i + 1), direct.push_back(false);
      chains = rules = 0;
    }
  }
  if (cuts.back() != n) cuts.push_back(n), direct.push_back(false);
  const size_t slices = cuts.size() - 1;
  // Workers take slices in order from a counter and render each into one of
  // `in_flight` buffers, up to that many slices ahead of the one this thread
  // is writing; this thread writes them in order, and writes the long chains
  // itself. The workers live for the whole table: a slice is about a
  // millisecond of work, short against starting threads for each. Four
  // slices a thread: each holds up to ~400 KB of text, and a live snapshot's
  // peak RSS is the figure that counts there (32 slices took a 5k-Service
  // iptables-nft snapshot from 24 to 34 MB, against 100 MB for iptables-save;
  // the 20k import was as fast with 8 as with 32 on an idle machine, 0.25 s).
  const size_t in_flight = 4 * threads;
  std::vector<std::string> text(in_flight);
  std::vector<char> ready(in_flight, 0);
  std::mutex mu;
  std::condition_variable cv;
  size_t taken = 0, written = 0;  // slices handed to workers; slices written (both under mu)
  bool stop = false;
  std::exception_ptr failure;  // a worker's (a RuleText error), rethrown here
  auto work = [&] {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] {
        while (taken < slices && direct[taken]) ++taken;
        return stop || taken >= slices || taken < written + in_flight;
      });
      if (stop || taken >= slices) return;
      const size_t k = taken++;
      lock.unlock();
      try {
        Writer slice(nullptr, std::move(text[k % in_flight]));
        slice.first_ = cuts[k] == 0;
        for (size_t i = cuts[k]; i < cuts[k + 1]; ++i) slice.item(level), write_chain(slice, t.chains[i], i, level, ctx);
        text[k % in_flight] = std::move(slice.text());
        lock.lock();
      } catch (...) {
        lock.lock();
        if (!failure) failure = std::current_exception();
        stop = true;
        cv.notify_all();
        return;
      }
      ready[k % in_flight] = 1;
      cv.notify_all();
    }
  };
  {
    std::vector<std::jthread> pool;
    // However this thread leaves, the workers are told to stop before they are joined.
    struct Stop {
      std::mutex& mu;
      std::condition_variable& cv;
      bool& stop;
      ~Stop() {
        std::lock_guard lock(mu);
        stop = true;
        cv.notify_all();
      }
    } stop_workers{mu, cv, stop};
    for (size_t k = 0; k < threads; ++k) pool.emplace_back(work);
    for (size_t k = 0; k < slices; ++k) {
      if (direct[k]) {
        const size_t i = cuts[k];
        w.first_ = i == 0;
        w.item(level), write_chain(w, t.chains[i], i, level, ctx);
      } else {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return ready[k % in_flight] || failure; });
        if (failure) break;
        lock.unlock();
        w.text_block(text[k % in_flight]);
      }
      std::lock_guard lock(mu);
      ready[k % in_flight] = 0;
      ++written;
      cv.notify_all();
    }
  }
  if (failure) std::rethrow_exception(failure);
  w.first_ = false;
}

void write_table(Writer& w, const Table& t, int level, const RuleText* rule_text) {
  const TableContext ctx{rule_text, &t};
  // Keys in sorted order, the declarations' among them.
  const nlohmann::json declarations = table_declarations_json(t);
  auto declared = [&](std::string_view from, std::string_view to) {
    for (const auto& [k, v] : declarations.items()) {
      if (k >= from && k < to) w.key(k, level + 1), write_value(w, v, level + 1);
    }
  };
  w.open('{', level);
  w.key("backend", level + 1), w.string(to_string(t.backend));
  w.key("chains", level + 1);
  w.open('[', level + 1);
  write_chains(w, t, level + 2, ctx);
  w.close(']', level + 1, t.chains.empty());
  declared("chains", "family");  // comment, declarations_recorded
  w.key("family", level + 1), w.string(t.family);
  declared("family", "name");    // flags, flowtables, handle
  w.key("name", level + 1), w.string(t.name);
  declared("name", "sets");      // objects
  w.key("sets", level + 1);
  w.open('[', level + 1);
  for (const auto& s : t.sets) w.item(level + 2), write_set(w, s, level + 2);
  w.close(']', level + 1, t.sets.empty());
  w.close('}', level, false);
}

}  // namespace

void write_snapshot(const Snapshot& s, std::FILE* out, const RuleText* rule_text) {
  // Everything but the tables through the model's own JSON form, so no field
  // is spelled twice; the tables go where its empty "tables" array is.
  Snapshot rest;
  rest.schema = s.schema;
  rest.node = s.node;
  rest.netfilter.collected = s.netfilter.collected;
  rest.netfilter.collection = s.netfilter.collection;
  rest.ebpf = s.ebpf;
  rest.agents = s.agents;
  rest.ipsets = s.ipsets;
  rest.ipvs = s.ipvs;
  rest.unavailable = s.unavailable;
  const std::string text = to_json(rest).dump(1);
  const std::string marker = "\n  \"tables\": []";
  const size_t at = text.find(marker);
  if (at == std::string::npos || text.find(marker, at + 1) != std::string::npos) {
    throw std::runtime_error("snapshot JSON has no unique netfilter tables slot");
  }
  Writer w(out);
  w.raw(std::string_view(text).substr(0, at));
  w.raw("\n  \"tables\": ");
  w.open('[', 2);
  for (const auto& t : s.netfilter.tables) w.item(3), write_table(w, t, 3, rule_text);
  w.close(']', 2, s.netfilter.tables.empty());
  w.raw(std::string_view(text).substr(at + marker.size()));
  w.raw("\n");
  w.flush();
}

// ---- RuleLines ------------------------------------------

// The buffer's size() is the room made so far (zero-filled once, in 256 KiB
// steps within the reserved capacity, doubling beyond it); `used` is the
// text. Rules are rendered straight into the room.
struct RuleLines::Impl {
  std::string buf;
  size_t used = 0;
  bool first = true;
};

RuleLines::RuleLines() : impl_(std::make_unique<Impl>()) {}
RuleLines::~RuleLines() = default;
void RuleLines::start_chain() { impl_->first = true; }
void RuleLines::reserve(size_t bytes) {
  std::string& b = impl_->buf;
  if (bytes <= b.capacity()) return;
  if (impl_->used == 0) std::string().swap(b);  // the room holds no text: nothing to copy over
  b.reserve(bytes);
}
void RuleLines::add(const Rule& rule) {
  std::string& b = impl_->buf;
  const size_t need = impl_->used + 2 + kRuleLevel + max_rule_text(rule);
  if (need > b.size()) {
    const size_t step = need + (256 << 10);  // fresh pages cost: touch little beyond the text
    const size_t size = step <= b.capacity() ? step : need <= b.capacity() ? b.capacity() : std::max(need, 2 * b.size());
    if (size <= b.capacity()) populate_for_write(b.data() + b.size(), size - b.size());
    b.resize(size);
  }
  char* o = b.data() + impl_->used;
  // What Writer::item(kRuleLevel) writes before an item of the "rules" array.
  if (!impl_->first) *o++ = ',';
  impl_->first = false;
  *o++ = '\n';
  std::memset(o, ' ', kRuleLevel);
  o += kRuleLevel;
  impl_->used = static_cast<size_t>(render_rule(o, rule) - b.data());
}
size_t RuleLines::size() const { return impl_->used; }
std::string_view RuleLines::view() const { return std::string_view(impl_->buf).substr(0, impl_->used); }
void RuleLines::clear() { impl_->used = 0; }
std::string& RuleLines::text() {
  impl_->buf.resize(impl_->used);
  return impl_->buf;
}

namespace {

// [at, at + size) of `fd` to `sink` in pieces of at most 1 MiB: a chain of
// 30k rules (KUBE-SERVICES at 30k Services) is 19 MB of text, and a copy of
// it whole would sit beside the writer's own.
void read_back(int fd, uint64_t at, uint64_t size, const std::function<void(std::string_view)>& sink) {
  static constexpr size_t kPiece = size_t{1} << 20;
  std::string piece;
  for (uint64_t done = 0; done < size;) {
    piece.resize(static_cast<size_t>(std::min<uint64_t>(kPiece, size - done)));
    size_t got = 0;
    while (got < piece.size()) {
      const ssize_t n = ::pread(fd, piece.data() + got, piece.size() - got, static_cast<off_t>(at + done + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) throw std::runtime_error(std::string("reading back rule text: ") + std::strerror(n < 0 ? errno : EIO));
      got += static_cast<size_t>(n);
    }
    sink(piece);
    done += piece.size();
  }
}

}  // namespace

// ---- RuleSpool ----------------------------------------------------------

struct RuleSpool::Impl {
  UniqueFd fd;
  mutable std::mutex mu;
  size_t batch_size = 0;
  uint64_t end = 0;      // bytes stored
  uint64_t written = 0;  // of which in the file; the rest is `pending`
  // Chains arrive a few hundred bytes at a time from several threads: one
  // pwrite each put the threads in a queue on the lock and the inode (30k
  // writes at 3000 Services). They are gathered here and written a batch at
  // a time; a batch the file refused stays here for good.
  std::string pending;
  // The writer asks for chains in the snapshot's order, which collectors
  // store them in, give or take the threads: one read of a batch's worth
  // serves the next many chains.
  mutable std::string window;
  mutable uint64_t window_at = 0;
  mutable size_t served = 0;  // chains the window has given
  struct Span {
    uint64_t offset = 0, length = 0;
  };
  // Per table, per chain name: a 1M-rule node has 350k chains, so the names
  // sit one after another in blocks (no allocation each) and the maps hold
  // views of them.
  std::map<std::string, std::unordered_map<std::string_view, Span>> tables;
  std::vector<std::unique_ptr<char[]>> name_blocks;
  char* block_at = nullptr;
  size_t block_left = 0;
  int failed = 0;  // errno of the first failed write

  static std::string table_key(Backend backend, const std::string& family, const std::string& table) {
    std::string k(to_string(backend));
    k += '\0';
    k += family;
    k += '\0';
    k += table;
    return k;
  }
  std::string_view keep(std::string_view name) {
    static constexpr size_t kBlock = 64 << 10;
    if (name.size() > block_left) {
      const size_t size = std::max(kBlock, name.size());
      name_blocks.push_back(std::make_unique<char[]>(size));
      block_at = name_blocks.back().get();
      block_left = size;
    }
    std::memcpy(block_at, name.data(), name.size());
    const std::string_view kept(block_at, name.size());
    block_at += name.size();
    block_left -= name.size();
    return kept;
  }
  // Under mu.
  const Span* find(Backend backend, const std::string& family, const std::string& table,
                   const std::string& chain) const {
    auto t = tables.find(table_key(backend, family, table));
    if (t == tables.end()) return nullptr;
    auto c = t->second.find(chain);
    return c == t->second.end() ? nullptr : &c->second;
  }
  // Under mu. Writes `pending` to the file; on failure it stays in memory
  // (the chains in it are not lost) and nothing more is taken.
  void flush() {
    if (failed || pending.empty()) return;
    for (size_t off = 0; off < pending.size();) {
      const ssize_t n = ::pwrite(fd.get(), pending.data() + off, pending.size() - off,
                                 static_cast<off_t>(written + off));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed = n < 0 ? errno : ENOSPC;  // a full /tmp
        return;
      }
      off += static_cast<size_t>(n);
    }
    written += pending.size();
    pending.clear();
  }
  // Under mu. The text of `span` to `sink`.
  void read(const Span& span, const std::function<void(std::string_view)>& sink) const {
    static constexpr uint64_t kWindow = 64 << 10, kBehind = 8 << 10;
    if (span.offset >= written) return sink(std::string_view(pending).substr(span.offset - written, span.length));
    if (span.length > kWindow) return read_back(fd.get(), span.offset, span.length, sink);
    if (span.offset < window_at || span.offset + span.length > window_at + window.size()) {
      // Starts a little before the chain (the threads that stored them finish
      // chains a few places out of order); just the chain when the last
      // window served only one and this one is far from it (chains asked in
      // no order the spool knows).
      const uint64_t last_end = window_at + window.size();
      const bool near_last = span.offset + kWindow >= window_at && span.offset <= last_end + kWindow;
      const bool ahead = window.empty() || served > 1 || near_last;
      const uint64_t behind = ahead ? std::min(span.offset, kBehind) : 0;
      window_at = span.offset - behind;
      window.resize(static_cast<size_t>(
          std::min<uint64_t>(std::max<uint64_t>(ahead ? kWindow : 0, behind + span.length), written - window_at)));
      served = 0;
      for (size_t got = 0; got < window.size();) {
        const ssize_t n = ::pread(fd.get(), window.data() + got, window.size() - got, static_cast<off_t>(window_at + got));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          window.clear();
          throw std::runtime_error(std::string("reading back rule text: ") + std::strerror(n < 0 ? errno : EIO));
        }
        got += static_cast<size_t>(n);
      }
    }
    ++served;
    sink(std::string_view(window).substr(span.offset - window_at, span.length));
  }
};

RuleSpool::RuleSpool(size_t batch_size) : impl_(new Impl) {
  impl_->batch_size = std::max<size_t>(batch_size, 1);
  const char* dir = std::getenv("TMPDIR");
  for (const char* d : {dir, "/tmp"}) {
    if (d == nullptr || *d == '\0') continue;
    impl_->fd = UniqueFd(::open(d, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600));
    if (impl_->fd) return;
  }
  const int err = errno;
  delete impl_;
  throw SystemError("opening a temporary file for rule text (O_TMPFILE in $TMPDIR or /tmp)", err);
}

RuleSpool::~RuleSpool() { delete impl_; }

bool RuleSpool::store(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                      std::vector<Rule>& rules) {
  RuleLines lines;  // rendered outside the lock
  for (const auto& r : rules) lines.add(r);
  {
    std::lock_guard lock(impl_->mu);
    if (impl_->failed) return false;
  }
  store_text(backend, family, table, chain, lines.text());
  rules.clear();
  rules.shrink_to_fit();
  return true;
}

void RuleSpool::store_text(Backend backend, const std::string& family, const std::string& table, const std::string& chain,
                           std::string& text) {
  std::lock_guard lock(impl_->mu);
  const Impl::Span span{impl_->end, text.size()};
  auto& chains = impl_->tables[Impl::table_key(backend, family, table)];
  if (auto it = chains.find(chain); it != chains.end()) {
    it->second = span;
  } else {
    chains.emplace(impl_->keep(chain), span);
  }
  impl_->end += text.size();
  if (impl_->failed || text.size() < impl_->batch_size / 2) {
    impl_->pending += text;
    if (impl_->pending.size() >= impl_->batch_size) impl_->flush();
  } else {
    // A long chain (KUBE-SERVICES: 2 MB at 5,000 Services) goes to the file
    // as it is, not copied into the batch first.
    impl_->flush();
    if (impl_->failed) {
      impl_->pending += text;
    } else {
      std::swap(impl_->pending, text);  // the batch is empty now
      impl_->flush();                   // a failure keeps it there, in memory
      if (!impl_->failed) std::swap(impl_->pending, text);
    }
  }
  text.clear();
  text.shrink_to_fit();
}

int RuleSpool::failure() const {
  std::lock_guard lock(impl_->mu);
  return impl_->failed;
}

void RuleSpool::reset() {
  std::lock_guard lock(impl_->mu);
  impl_->tables.clear();
  impl_->name_blocks.clear();
  impl_->block_at = nullptr;
  impl_->block_left = 0;
  impl_->end = impl_->written = 0;
  impl_->pending.clear();
  impl_->window.clear();
  impl_->window_at = 0;
  impl_->served = 0;
  impl_->failed = 0;
  if (::ftruncate(impl_->fd.get(), 0) != 0) throw SystemError("truncating the rule text file", errno);
}

bool RuleSpool::append_to(Backend backend, const std::string& family, const std::string& table,
                          const std::string& chain, std::string& out) const {
  return write_to_sink(backend, family, table, chain, [&out](std::string_view text) { out += text; });
}

bool RuleSpool::write_to(const Table& table, size_t /*chain_index*/, const Chain& chain,
                         const std::function<void(std::string_view)>& sink) const {
  return write_to_sink(table.backend, table.family, table.name, chain.name, sink);
}

bool RuleSpool::write_to_sink(Backend backend, const std::string& family, const std::string& table,
                              const std::string& chain, const std::function<void(std::string_view)>& sink) const {
  std::lock_guard lock(impl_->mu);
  const Impl::Span* span = impl_->find(backend, family, table, chain);
  if (span == nullptr) return false;
  impl_->read(*span, sink);
  return true;
}

uint64_t RuleSpool::bytes() const {
  std::lock_guard lock(impl_->mu);
  return impl_->end;
}

namespace {

[[noreturn]] void write_failed(const std::string& path, int err) {
  throw InputError(path, 0, "cannot write output file: " + errno_text(err ? err : EIO));
}

// The snapshot into `out`, compressed on the way when asked: the compressor
// sits between the writer and the file, so plain output keeps its direct path.
void write_snapshot_as(const Snapshot& s, std::FILE* out, Compression c, const RuleText* rule_text) {
  if (c == Compression::None) return write_snapshot(s, out, rule_text);
  CompressingFile z(out, c);
  write_snapshot(s, z.get(), rule_text);
  z.finish();
}

}  // namespace

void save_snapshot(const Snapshot& s, const std::string& path, const RuleText* rule_text) {
  if (path == "-") {
    if (rule_text) rule_text->check();  // nothing written on bad input
    try {
      write_snapshot(s, stdout, rule_text);
      if (std::fflush(stdout) != 0) throw SystemError("writing the snapshot", errno);
    } catch (const InputError&) {
      throw;
    } catch (const SystemError& e) {
      // A full or closed stdout is the caller's output, not dpscope's fault: exit 2, errno named.
      stdout_failed("writing the snapshot to standard output", e.err());
    } catch (const std::runtime_error&) {
      stdout_failed("writing the snapshot to standard output", EIO);
    }
    return;
  }
  if (const auto suffix = unsupported_compression_suffix(path); !suffix.empty()) {
    throw InputError(path, 0, "cannot write " + std::string(suffix) +
                                  " compression: name the file .json.zst (zstd) or .json.gz (gzip), or .json for plain JSON");
  }
  const Compression compression = compression_for_name(path);
  static constexpr size_t kBuffer = 1 << 20;
  // An existing FIFO or device (/dev/null, /dev/stdout) is written in place:
  // renaming a temporary file over it would replace the node itself.
  struct stat existing {};
  if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) {
    if (S_ISDIR(existing.st_mode)) throw InputError(path, 0, "is a directory, expected a file");
    if (rule_text) rule_text->check();  // nothing written on bad input
    std::unique_ptr<std::FILE, decltype(&std::fclose)> f(std::fopen(path.c_str(), "w"), std::fclose);
    if (!f) write_failed(path, errno);
    std::setvbuf(f.get(), nullptr, _IOFBF, kBuffer);
    try {
      write_snapshot_as(s, f.get(), compression, rule_text);
      if (std::fclose(f.release()) != 0) throw SystemError("closing the output file", errno);
    } catch (const InputError&) {
      throw;
    } catch (const SystemError& e) {
      write_failed(path, e.err());  // errno as it was at the failure, not after the unwinding's destructors
    } catch (const std::runtime_error&) {
      write_failed(path, EIO);
    }
    return;
  }
  TempOutput tmp(path);  // removed unless committed, also on SIGINT/SIGTERM
  std::unique_ptr<std::FILE, decltype(&std::fclose)> f(fdopen(tmp.fd(), "w"), std::fclose);
  if (!f) write_failed(path, errno);
  tmp.release_fd();
  std::setvbuf(f.get(), nullptr, _IOFBF, kBuffer);
  try {
    write_snapshot_as(s, f.get(), compression, rule_text);
    if (std::fflush(f.get()) != 0) throw SystemError("writing the output file", errno);
    if (std::fclose(f.release()) != 0) throw SystemError("closing the output file", errno);
  } catch (const InputError&) {  // bad input found while writing (RuleText): the file is not made
    throw;
  } catch (const SystemError& e) {
    write_failed(path, e.err());  // errno as it was at the failure, not after the unwinding's destructors
  } catch (const std::runtime_error&) {
    write_failed(path, EIO);
  }
  tmp.commit();  // mode of the file replaced, or 0666 & ~umask
}

}  // namespace dpscope::model
