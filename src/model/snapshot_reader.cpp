// Reads a snapshot without a JSON tree of its rules.
//
// A 20k-service snapshot holds ~350k rules; as an nlohmann DOM they cost
// ~2.5 KB each and most of the load time. So the SAX events under
// /netfilter/tables/N/chains build model::Chain and model::Rule directly
// (and drop the rules of chains the caller does not read), while everything
// else -- a few hundred small objects -- goes through the DOM and the same
// from_json() as before, so field checks and messages stay in one place.
//
// Uses two pieces of nlohmann's detail namespace (json_sax_dom_parser for the
// DOM side, parser<> to plug in our own input); written against 3.11.2, the
// version Debian 12 ships.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <thread>
#include <limits>
#include <stdexcept>

#include "model/compression.h"
#include "model/json.h"
#include "model/json_input.h"
#include "util/error.h"
#include "util/fd.h"

namespace dpscope::model {

namespace {

using nlohmann::json;

// Keys of the chain-level records, resolved once per key event.
enum class Key : uint8_t {
  Other,
  // chain
  Base, Name, PolicyCounters, RuleCount, Rules, RulesRecorded, Handle,
  // base
  Hook, Type, Priority, Policy, Devices, Offload,
  // counters
  Packets, Bytes,
  // rule
  Counters, Match, Position, Raw, Target, TargetArgs, Text, Undecoded, VerdictKind,
  // match
  Comment, Destination, Dport, DportNegated, Modules, Protocol, ProtocolNegated, Source,
  // prefix
  Cidr, Negated,
};

Key key_of(const std::string& k) {
  // Called for every key of every rule: dispatch on length before comparing.
  switch (k.size()) {
    case 3: return k == "raw" ? Key::Raw : Key::Other;
    case 4:
      return k == "name" ? Key::Name : k == "base" ? Key::Base : k == "hook" ? Key::Hook : k == "type" ? Key::Type
             : k == "cidr" ? Key::Cidr : k == "text" ? Key::Text : Key::Other;
    case 5: return k == "rules" ? Key::Rules : k == "match" ? Key::Match : k == "bytes" ? Key::Bytes
                   : k == "dport" ? Key::Dport : Key::Other;
    case 6: return k == "policy" ? Key::Policy : k == "target" ? Key::Target : k == "source" ? Key::Source
                   : k == "handle" ? Key::Handle : Key::Other;
    case 7: return k == "packets" ? Key::Packets : k == "comment" ? Key::Comment : k == "modules" ? Key::Modules
                   : k == "negated" ? Key::Negated : k == "devices" ? Key::Devices : k == "offload" ? Key::Offload
                   : Key::Other;
    case 8: return k == "priority" ? Key::Priority : k == "counters" ? Key::Counters : k == "position" ? Key::Position
                   : k == "protocol" ? Key::Protocol : Key::Other;
    case 9: return k == "undecoded" ? Key::Undecoded : Key::Other;
    case 10: return k == "rule_count" ? Key::RuleCount : Key::Other;
    case 11: return k == "target_args" ? Key::TargetArgs : k == "destination" ? Key::Destination : Key::Other;
    case 12: return k == "verdict_kind" ? Key::VerdictKind : Key::Other;
    case 13: return k == "dport_negated" ? Key::DportNegated : Key::Other;
    case 14: return k == "rules_recorded" ? Key::RulesRecorded : Key::Other;
    case 15: return k == "policy_counters" ? Key::PolicyCounters : Key::Other;
    case 16: return k == "protocol_negated" ? Key::ProtocolNegated : Key::Other;
    default: return Key::Other;
  }
}

// Where a chain-level value sits, innermost last.
enum class Frame : uint8_t { ChainList, Chain, Base, Devices, PolicyCounters, RuleList, Rule, Match, RuleCounters, Prefix, Modules };

// One scalar event, as the Reader in json.cpp would see it.
struct Scalar {
  enum Kind { Null, Bool, Unsigned, Signed, Float, String } kind;
  bool b = false;
  uint64_t u = 0;
  int64_t i = 0;
  std::string* s = nullptr;
};

// What the SAX handler and the error path share with the Input, which the
// parser owns (moved in, out of reach).
struct InputControl {
  bool skip_requested = false;  // set by the handler: skip the array just opened
  uint64_t skipped_objects = 0; // objects in the last skipped array
  uint64_t skipped_bytes = 0;   // bytes the lexer never saw (file offset = its offset + this)
  size_t depth_at_skip = 0;     // nesting of the skipped array itself
  std::string skip_error;       // what is wrong in a skipped array ("" = nothing)
  // With skip_requested: keep each rule's verdict fields (RuleDetail::Verdict)
  // from the scan instead of only counting the rules.
  bool verdict_requested = false;
  std::vector<Rule> verdict_rules;
  // The first rule the scan found wrong: its index, field ("" = the rule) and what.
  struct VerdictError {
    uint64_t rule = 0;
    std::string field, what;
  };
  std::optional<VerdictError> verdict_error;
  bool too_deep = false;        // nested beyond kJsonDepthLimit
  int read_error = 0;
};

// The verdict fields of a rule (RuleDetail::Verdict), as the scan meets them.
enum class VerdictField : uint8_t { None, Position, VerdictKind, Target, TargetArgs };

VerdictField verdict_field(const std::string& key) {
  return key == "position"       ? VerdictField::Position
         : key == "verdict_kind" ? VerdictField::VerdictKind
         : key == "target"       ? VerdictField::Target
         : key == "target_args"  ? VerdictField::TargetArgs
                                 : VerdictField::None;
}

const char* verdict_field_name(VerdictField f) {
  switch (f) {
    case VerdictField::Position: return "position";
    case VerdictField::VerdictKind: return "verdict_kind";
    case VerdictField::Target: return "target";
    case VerdictField::TargetArgs: return "target_args";
    default: return "";
  }
}

// A JSON string's bytes as written (already checked by the scan) -> its value.
std::string unescaped(const std::string& raw) {
  if (raw.find('\\') == std::string::npos) return raw;
  return json::parse("\"" + raw + "\"").get<std::string>();
}

// A rule's position from its number text, with the SAX reader's messages.
template <typename Wrong>
bool position_of(const std::string& token, uint32_t& to, Wrong& wrong) {
  if (token.find_first_of(".eE") != std::string::npos) return wrong("position", "expected an integer"), false;
  if (token[0] == '-') {
    if (token.find_first_not_of("-0") == std::string::npos) return to = 0, true;  // -0 is 0
    return wrong("position", "integer out of range"), false;
  }
  errno = 0;
  const unsigned long long v = std::strtoull(token.c_str(), nullptr, 10);
  if (errno == ERANGE) return wrong("position", "expected an integer"), false;  // nlohmann: a float
  if (v > std::numeric_limits<uint32_t>::max()) return wrong("position", "integer out of range"), false;
  to = static_cast<uint32_t>(v);
  return true;
}

// The bytes nlohmann's lexer reads, from a file (1 MiB reads) or a string,
// with one addition: skip_array(), asked for by the SAX handler right after
// a '[' of rules it will not keep, jumps to the matching ']' with a plain
// byte scan and counts the objects in between. Over half of a kube-proxy
// node's rules (KUBE-SEP chains) are only counted by reports, and scanning
// them is ~10x cheaper than tokenizing them. The same scan keeps a rule's
// verdict fields when asked (RuleDetail::Verdict: verify reads every KUBE-SEP
// rule's DNAT target), still without the lexer.
class Input {
 public:
  using char_type = char;

  Input(std::string_view text, InputControl& control)
      : control_(&control), pos_(text.data()), end_(text.data() + text.size()) {}
  Input(int fd, InputControl& control)
      : control_(&control), fd_(fd), buffer_(1 << 20), pos_(buffer_.data()), end_(buffer_.data()) {}
  // A compressed file: the buffer is filled with decompressed bytes (its
  // errors, InputError, end the parse).
  Input(Decompressor& source, InputControl& control)
      : control_(&control), source_(&source), buffer_(1 << 20), pos_(buffer_.data()), end_(buffer_.data()) {}

  std::char_traits<char>::int_type get_character() {
    if (control_->skip_requested) return skip_to_close();
    if (pos_ == end_ && !refill()) return std::char_traits<char>::eof();
    return std::char_traits<char>::to_int_type(*pos_++);
  }

 private:
  bool refill() {
    if (source_ != nullptr) {
      const size_t n = source_->read(buffer_.data(), buffer_.size());
      if (n == 0) return false;
      pos_ = buffer_.data();
      end_ = pos_ + n;
      return true;
    }
    if (fd_ < 0) return false;
    for (;;) {
      const ssize_t n = ::read(fd_, buffer_.data(), buffer_.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) control_->read_error = errno;
      if (n <= 0) return false;
      pos_ = buffer_.data();
      end_ = pos_ + n;
      return true;
    }
  }

  // Called just after the array's '['; returns its ']', or EOF (which the
  // lexer reports as a syntax error) with control_->skip_error set.
  //
  // Cheaper than the lexer because nothing is stored, but the same grammar
  // as nlohmann's: a file the DOM parser refuses is refused here too
  // (structure, string escapes and UTF-8, numbers and their range, nesting
  // depth), and every element of the array must be an object.
  std::char_traits<char>::int_type skip_to_close() {
    control_->skip_requested = false;
    const bool verdicts = control_->verdict_requested;
    control_->verdict_requested = false;
    uint64_t objects = 0, bytes = 0;
    // Verdict fields: the rule being scanned, the field whose value comes next.
    VerdictField field = VerdictField::None;
    Rule rule;
    bool has_position = false;
    std::string text;
    std::string* capture = nullptr;  // skip_string appends the raw string here
    auto wrong = [&](const char* name, const char* what) {
      if (!control_->verdict_error) control_->verdict_error = InputControl::VerdictError{objects - 1, name, what};
    };
    auto finish_rule = [&] {
      if (!has_position) wrong("", "missing key 'position'");
      static const char* kinds[] = {"jump", "goto", "verdict", "target", "vmap", "none"};
      if (std::find(std::begin(kinds), std::end(kinds), rule.verdict_kind) == std::end(kinds)) {
        if (!control_->verdict_error) {
          control_->verdict_error =
              InputControl::VerdictError{objects - 1, "verdict_kind", "unknown verdict_kind '" + rule.verdict_kind + "'"};
        }
      }
      control_->verdict_rules.push_back(std::move(rule));
    };
    enum class Want : uint8_t { ValueOrClose, Value, KeyOrClose, Key, Colon, CommaOrClose };
    std::vector<bool> in_object;  // the open containers inside the array, innermost last
    Want want = Want::ValueOrClose;
    auto eof = std::char_traits<char>::eof();
    auto peek = [&]() -> int {
      if (pos_ == end_ && !refill()) return -1;
      return static_cast<unsigned char>(*pos_);
    };
    auto take = [&] {
      ++pos_;
      ++bytes;
    };
    auto fail = [&](const std::string& what) {
      control_->skip_error = what;
      control_->skipped_bytes += bytes;
      return eof;
    };
    for (;;) {
      int c = peek();
      while (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        take();
        c = peek();
      }
      if (c < 0) return fail("unexpected end of input");
      const bool top_array = in_object.empty() || !in_object.back();
      if (want == Want::CommaOrClose) {
        take();
        if (c == ',') {
          want = top_array ? Want::Value : Want::Key;
          continue;
        }
        if (c != (top_array ? ']' : '}')) return fail(std::string("expected ',' or '") + (top_array ? ']' : '}') + "'");
        if (in_object.empty()) {
          control_->skipped_objects = objects;
          control_->skipped_bytes += bytes - 1;  // the lexer sees this one
          return std::char_traits<char>::to_int_type(static_cast<char>(c));
        }
        in_object.pop_back();
        if (verdicts && in_object.empty()) finish_rule();
        continue;
      }
      if (want == Want::Colon) {
        take();
        if (c != ':') return fail("expected ':'");
        want = Want::Value;
        continue;
      }
      if (want == Want::KeyOrClose || want == Want::Key) {
        if (c == '}' && want == Want::KeyOrClose) {
          take();
          in_object.pop_back();
          if (verdicts && in_object.empty()) finish_rule();
          want = Want::CommaOrClose;
          continue;
        }
        if (c != '"') return fail("expected a string key");
        take();
        const bool rule_key = verdicts && in_object.size() == 1;
        if (rule_key) text.clear();
        if (auto bad = skip_string(bytes, rule_key ? &text : nullptr)) return fail(bad);
        if (rule_key) field = verdict_field(unescaped(text));
        want = Want::Colon;
        continue;
      }
      // A value (or the array's end right after '[').
      if (c == ']' && want == Want::ValueOrClose) {
        take();
        if (in_object.empty()) {
          control_->skipped_objects = objects;
          control_->skipped_bytes += bytes - 1;
          return std::char_traits<char>::to_int_type(']');
        }
        in_object.pop_back();
        want = Want::CommaOrClose;
        continue;
      }
      if (in_object.empty() && c != '{') return fail("a rule is not an object");
      if (c == '{' || c == '[') {
        take();
        if (control_->depth_at_skip + in_object.size() + 1 > kJsonDepthLimit) {
          control_->too_deep = true;
          return fail(too_deep_message());
        }
        if (c == '{' && in_object.empty()) {
          ++objects;
          if (verdicts) {
            rule = Rule{};
            has_position = false;
          }
        }
        field = VerdictField::None;  // an object or array where a verdict field is: ignored, as the SAX reader does
        in_object.push_back(c == '{');
        want = c == '{' ? Want::KeyOrClose : Want::ValueOrClose;
        continue;
      }
      // A rule's verdict field (only at the rule object's own level).
      const VerdictField value_of = verdicts && in_object.size() == 1 ? field : VerdictField::None;
      field = VerdictField::None;
      capture = value_of == VerdictField::None ? nullptr : &text;
      if (capture) text.clear();
      if (c == '"') {
        take();
        if (auto bad = skip_string(bytes, capture)) return fail(bad);
        if (value_of == VerdictField::Position) wrong("position", "expected an integer");
        else if (value_of == VerdictField::VerdictKind) rule.verdict_kind = unescaped(text);
        else if (value_of == VerdictField::Target) rule.target = unescaped(text);
        else if (value_of == VerdictField::TargetArgs) rule.target_args = unescaped(text);
      } else if (c == '-' || (c >= '0' && c <= '9')) {
        if (auto bad = skip_number(bytes, capture)) return fail(bad);
        if (value_of == VerdictField::Position) {
          has_position = position_of(text, rule.position, wrong);
        } else if (value_of != VerdictField::None) {
          wrong(verdict_field_name(value_of), "expected a string");
        }
      } else if (c == 't' || c == 'f' || c == 'n') {
        const char* word = c == 't' ? "true" : c == 'f' ? "false" : "null";
        for (const char* w = word; *w; ++w) {
          if (peek() != *w) return fail(std::string("invalid literal; expected '") + word + "'");
          take();
        }
        // null is an absent field; true / false the wrong type.
        if (c != 'n' && value_of != VerdictField::None) {
          wrong(verdict_field_name(value_of),
                value_of == VerdictField::Position ? "expected an integer" : "expected a string");
        }
      } else {
        return fail("invalid value");
      }
      want = Want::CommaOrClose;
    }
  }

  // After the opening quote, through the closing one. Returns what is wrong, or nullptr.
  // `raw`, when given, gets the string's bytes as written (escapes undone by unescaped()).
  const char* skip_string(uint64_t& bytes, std::string* raw = nullptr) {
    auto next = [&]() -> int {
      if (pos_ == end_ && !refill()) return -1;
      ++bytes;
      if (raw) raw->push_back(*pos_);
      return static_cast<unsigned char>(*pos_++);
    };
    auto hex4 = [&](unsigned& v) {
      v = 0;
      for (int k = 0; k < 4; ++k) {
        const int h = next();
        if (h >= '0' && h <= '9') v = v * 16 + static_cast<unsigned>(h - '0');
        else if (h >= 'a' && h <= 'f') v = v * 16 + static_cast<unsigned>(h - 'a' + 10);
        else if (h >= 'A' && h <= 'F') v = v * 16 + static_cast<unsigned>(h - 'A' + 10);
        else return false;
      }
      return true;
    };
    for (;;) {
      const int c = next();
      if (c < 0) return "unexpected end of input in a string";
      if (c == '"') {
        if (raw) raw->pop_back();  // the closing quote
        return nullptr;
      }
      if (c < 0x20) return "control character in a string (must be escaped)";
      if (c == '\\') {
        const int e = next();
        if (e == 'u') {
          unsigned v = 0;
          if (!hex4(v)) return "invalid \\u escape";
          if (v >= 0xDC00 && v <= 0xDFFF) return "lone low surrogate in a \\u escape";
          if (v >= 0xD800 && v <= 0xDBFF) {
            unsigned low = 0;
            if (next() != '\\' || next() != 'u' || !hex4(low) || low < 0xDC00 || low > 0xDFFF) {
              return "high surrogate not followed by a low one";
            }
          }
        } else if (e != '"' && e != '\\' && e != '/' && e != 'b' && e != 'f' && e != 'n' && e != 'r' && e != 't') {
          return "invalid escape in a string";
        }
        continue;
      }
      if (c < 0x80) continue;
      // UTF-8, as nlohmann checks it: no overlong forms, no surrogates, <= U+10FFFF.
      int more = 0;
      int lo = 0x80, hi = 0xBF;
      if (c >= 0xC2 && c <= 0xDF) more = 1;
      else if (c == 0xE0) more = 2, lo = 0xA0;
      else if (c == 0xED) more = 2, hi = 0x9F;
      else if (c >= 0xE1 && c <= 0xEF) more = 2;
      else if (c == 0xF0) more = 3, lo = 0x90;
      else if (c == 0xF4) more = 3, hi = 0x8F;
      else if (c >= 0xF1 && c <= 0xF3) more = 3;
      else return "invalid UTF-8 in a string";
      for (int k = 0; k < more; ++k) {
        const int t = next();
        if (t < lo || t > hi) return "invalid UTF-8 in a string";
        lo = 0x80, hi = 0xBF;
      }
    }
  }

  // A JSON number, left for the next character to end; its value must be one
  // a double or a 64-bit integer holds (nlohmann refuses 1e999 too).
  // `out`, when given, gets the number's text.
  const char* skip_number(uint64_t& bytes, std::string* out = nullptr) {
    std::string local;
    std::string& token = out ? *out : local;
    auto peek = [&]() -> int {
      if (pos_ == end_ && !refill()) return -1;
      return static_cast<unsigned char>(*pos_);
    };
    auto take = [&] {
      token += *pos_++;
      ++bytes;
    };
    auto digits = [&] {
      size_t n = 0;
      for (int c = peek(); c >= '0' && c <= '9'; c = peek(), ++n) take();
      return n;
    };
    if (peek() == '-') take();
    if (peek() == '0') {
      take();
    } else if (digits() == 0) {
      return "invalid number";
    }
    bool integer = true;
    if (peek() == '.') {
      take();
      integer = false;
      if (digits() == 0) return "invalid number: no digit after '.'";
    }
    if (peek() == 'e' || peek() == 'E') {
      take();
      integer = false;
      if (peek() == '+' || peek() == '-') take();
      if (digits() == 0) return "invalid number: no digit in the exponent";
    }
    if (!integer || token.size() > 18) {
      errno = 0;
      const double v = std::strtod(token.c_str(), nullptr);
      if (!std::isfinite(v)) return "number out of range";
    }
    return nullptr;
  }

  InputControl* control_;
  Decompressor* source_ = nullptr;
  int fd_ = -1;
  std::vector<char> buffer_;
  const char* pos_;
  const char* end_;
};

class SnapshotSax {
 public:
  SnapshotSax(json& root, const LoadOptions& options, InputControl& input)
      : dom_(root, false), options_(options), input_(input) {}

  // Tables' chains, by table index, to splice into from_json()'s tables.
  std::vector<std::vector<Chain>> chains;
  // The first problem in the chains (reported after the schema check).
  std::string chain_error;
  // Nested beyond kJsonDepthLimit (the parse stopped there).
  bool too_deep = false;
  // A JSON syntax error: byte offset and nlohmann's message.
  std::optional<std::pair<size_t, std::string>> syntax_error;

  // ---- SAX interface (nlohmann calls these by name, no virtuals) ----
  bool null() { return in_chains() ? scalar({Scalar::Null}) : dom_.null(); }
  bool boolean(bool v) {
    if (!in_chains()) return dom_.boolean(v);
    Scalar s{Scalar::Bool};
    s.b = v;
    return scalar(s);
  }
  bool number_integer(json::number_integer_t v) {
    if (!in_chains()) return dom_.number_integer(v);
    Scalar s{Scalar::Signed};
    s.i = v;
    return scalar(s);
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (!in_chains()) return dom_.number_unsigned(v);
    Scalar s{Scalar::Unsigned};
    s.u = v;
    return scalar(s);
  }
  bool number_float(json::number_float_t v, const std::string& text) {
    return in_chains() ? scalar({Scalar::Float}) : dom_.number_float(v, text);
  }
  bool string(std::string& v) {
    if (!in_chains()) return dom_.string(v);
    Scalar s{Scalar::String};
    s.s = &v;
    return scalar(s);
  }
  bool binary(json::binary_t& v) { return in_chains() ? scalar({Scalar::Null}) : dom_.binary(v); }

  bool key(std::string& k) {
    if (in_chains()) {
      if (skip_ == 0) key_ = key_of(k);
      return true;
    }
    if (depth_ < kPathDepth) path_key_[depth_] = k;
    return dom_.key(k);
  }

  bool start_object(std::size_t n) {
    if (!deeper()) return false;
    if (in_chains()) return open(false);
    // The tables' elements are the objects at depth 3 under /netfilter/tables.
    if (depth_ == 3 && at_tables()) ++table_index_;
    ++depth_;
    return dom_.start_object(n);
  }
  bool end_object() {
    --nesting_;
    if (in_chains()) return close();
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t n) {
    if (!deeper()) return false;
    if (in_chains()) return open(true);
    if (depth_ == 4 && at_tables() && path_key_[4] == "chains") {
      // Enter chain mode; the DOM gets an empty array in its place.
      while (chains.size() <= static_cast<size_t>(table_index_)) chains.emplace_back();
      frames_.push_back(Frame::ChainList);
      return dom_.start_array(0) && dom_.end_array();
    }
    ++depth_;
    return dom_.start_array(n);
  }
  bool end_array() {
    --nesting_;
    if (in_chains()) return close();
    --depth_;
    return dom_.end_array();
  }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) {
    // out_of_range.406: a number no double holds (1e999), bad input like a syntax error.
    syntax_error = {byte, e.id == 406 ? "number out of range: " + token : "invalid JSON: " + json_error_text(e.what())};
    return false;
  }

 private:
  static constexpr int kPathDepth = 8;

  bool in_chains() const { return !frames_.empty(); }
  // Every object and array, DOM side or chain side: bounded (model/json_input.h).
  bool deeper() {
    if (++nesting_ <= kJsonDepthLimit) return true;
    too_deep = true;
    return false;
  }
  bool at_tables() const { return path_key_[1] == "netfilter" && path_key_[2] == "tables"; }

  std::vector<Chain>& table_chains() { return chains[static_cast<size_t>(table_index_)]; }

  // JSON pointer of the current chain-level position, for messages.
  std::string where(const char* field) const {
    std::string p = "/netfilter/tables/" + std::to_string(table_index_) + "/chains/" + std::to_string(chain_index_);
    for (size_t i = 1; i < frames_.size(); ++i) {
      switch (frames_[i]) {
        case Frame::Base: p += "/base"; break;
        case Frame::Devices: p += "/devices"; break;
        case Frame::PolicyCounters: p += "/policy_counters"; break;
        case Frame::RuleList: p += "/rules"; break;
        case Frame::Rule: p += "/" + std::to_string(rule_index_); break;
        case Frame::Match: p += "/match"; break;
        case Frame::RuleCounters: p += "/counters"; break;
        case Frame::Prefix: p += prefix_is_source_ ? "/source" : "/destination"; break;
        case Frame::Modules: p += "/modules"; break;
        default: break;
      }
    }
    if (field) p += std::string("/") + field;
    return p;
  }
  void fail(const char* field, const std::string& what) {
    if (chain_error.empty()) chain_error = where(field) + ": " + what;
  }

  // ---- typed setters: the same rules as the DOM Reader ----
  void set(std::string& to, const Scalar& s, const char* field) {
    if (s.kind == Scalar::Null) return;  // null = absent
    if (s.kind != Scalar::String) return fail(field, "expected a string");
    to = std::move(*s.s);
  }
  void set(bool& to, const Scalar& s, const char* field) {
    if (s.kind == Scalar::Null) return;
    if (s.kind != Scalar::Bool) return fail(field, "expected true or false");
    to = s.b;
  }
  template <typename T>
  bool integer(T& to, const Scalar& s, const char* field) {
    if (s.kind == Scalar::Null) return false;
    if (s.kind == Scalar::Unsigned) {
      if (s.u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return fail(field, "integer out of range"), false;
      to = static_cast<T>(s.u);
      return true;
    }
    if (s.kind == Scalar::Signed) {
      if (s.i < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (s.i > 0 && static_cast<uint64_t>(s.i) > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        return fail(field, "integer out of range"), false;
      }
      to = static_cast<T>(s.i);
      return true;
    }
    fail(field, "expected an integer");
    return false;
  }

  bool scalar(const Scalar& s) {
    if (skip_ > 0) return true;
    switch (frames_.back()) {
      case Frame::ChainList:
      case Frame::RuleList:
        fail(nullptr, "expected an object");
        break;
      case Frame::Chain:
        switch (key_) {
          case Key::Name:
            set(chain_.name, s, "name");
            has_name_ = s.kind == Scalar::String;
            break;
          case Key::RuleCount: has_rule_count_ = integer(chain_.rule_count, s, "rule_count"); break;
          case Key::Handle: integer(chain_.handle, s, "handle"); break;
          case Key::RulesRecorded: set(recorded_in_file_, s, "rules_recorded"); break;
          case Key::Comment:
            if (s.kind != Scalar::Null) set(chain_.comment.emplace(), s, "comment");
            break;
          case Key::Base: case Key::PolicyCounters: case Key::Rules:
            if (s.kind != Scalar::Null) fail(key_ == Key::Rules ? "rules" : key_ == Key::Base ? "base" : "policy_counters",
                                             key_ == Key::Rules ? "expected an array" : "expected an object");
            break;
          default: break;
        }
        break;
      case Frame::Base:
        switch (key_) {
          case Key::Hook: set(chain_.base->hook, s, "hook"); break;
          case Key::Type: set(chain_.base->type, s, "type"); break;
          case Key::Policy: set(chain_.base->policy, s, "policy"); break;
          case Key::Priority: integer(chain_.base->priority, s, "priority"); break;
          case Key::Offload: set(chain_.base->offload, s, "offload"); break;
          case Key::Devices:
            if (s.kind != Scalar::Null) fail("devices", "expected an array");
            break;
          default: break;
        }
        break;
      case Frame::Devices:
        if (s.kind != Scalar::String) {
          fail(nullptr, "expected a string");
        } else {
          chain_.base->devices.push_back(std::move(*s.s));
        }
        break;
      case Frame::PolicyCounters:
      case Frame::RuleCounters: {
        Counters& c = frames_.back() == Frame::PolicyCounters ? *chain_.policy_counters : *rule_.counters;
        if (key_ == Key::Packets) counters_seen_ |= integer(c.packets, s, "packets") ? 1 : 0;
        if (key_ == Key::Bytes) counters_seen_ |= integer(c.bytes, s, "bytes") ? 2 : 0;
        break;
      }
      case Frame::Rule:
        switch (key_) {
          case Key::Position: has_position_ = integer(rule_.position, s, "position"); break;
          case Key::Raw: set(rule_.raw, s, "raw"); break;
          case Key::Target: set(rule_.target, s, "target"); break;
          case Key::TargetArgs: set(rule_.target_args, s, "target_args"); break;
          case Key::Text: set(rule_.text, s, "text"); break;
          case Key::Undecoded: set(rule_.undecoded, s, "undecoded"); break;
          case Key::VerdictKind: set(rule_.verdict_kind, s, "verdict_kind"); break;
          case Key::Match: case Key::Counters:
            if (s.kind != Scalar::Null) fail(key_ == Key::Match ? "match" : "counters", "expected an object");
            break;
          default: break;
        }
        break;
      case Frame::Match: {
        RuleMatch& m = rule_.match;
        switch (key_) {
          case Key::Comment: set(m.comment, s, "comment"); break;
          case Key::Dport: set(m.dport, s, "dport"); break;
          case Key::DportNegated: set(m.dport_negated, s, "dport_negated"); break;
          case Key::Protocol: set(m.protocol, s, "protocol"); break;
          case Key::ProtocolNegated: set(m.protocol_negated, s, "protocol_negated"); break;
          case Key::Source: case Key::Destination: case Key::Modules:
            if (s.kind != Scalar::Null) fail(nullptr, "expected an object or array");
            break;
          default: break;
        }
        break;
      }
      case Frame::Prefix: {
        Prefix& p = prefix_is_source_ ? *rule_.match.source : *rule_.match.destination;
        if (key_ == Key::Cidr) {
          set(p.cidr, s, "cidr");
          has_cidr_ = s.kind == Scalar::String;
        }
        if (key_ == Key::Negated) set(p.negated, s, "negated");
        break;
      }
      case Frame::Modules:
        if (s.kind != Scalar::String) {
          fail(nullptr, "expected a string");
        } else {
          rule_.match.modules.push_back(std::move(*s.s));
        }
        break;
    }
    return true;
  }

  bool open(bool array) {
    if (skip_ > 0) {
      ++skip_;
      return true;
    }
    const Frame at = frames_.back();
    auto push = [&](Frame f) {
      frames_.push_back(f);
      return true;
    };
    auto skip = [&] {
      skip_ = 1;
      return true;
    };
    if (at == Frame::ChainList) {
      if (array) return fail(nullptr, "expected an object"), skip();
      chain_ = Chain{};
      has_name_ = has_rule_count_ = rules_dropped_ = false;
      detail_ = RuleDetail::Full;
      recorded_in_file_ = true;
      skipped_rules_ = 0;
      return push(Frame::Chain);
    }
    if (at == Frame::Chain) {
      if (key_ == Key::Base && !array) {
        chain_.base = BaseChain{};
        return push(Frame::Base);
      }
      if (key_ == Key::PolicyCounters && !array) {
        chain_.policy_counters = Counters{};
        counters_seen_ = 0;
        return push(Frame::PolicyCounters);
      }
      if (key_ == Key::Rules && array) {
        rule_index_ = -1;
        // Rules of a chain nobody reads are counted, not kept (name comes first
        // in dpscope's own files; otherwise they are kept and dropped at the end).
        detail_ = has_name_ && options_.rule_detail ? options_.rule_detail(chain_.name) : RuleDetail::Full;
        if (detail_ != RuleDetail::Full) {
          input_.skip_requested = true;  // the next event is this array's end
          input_.verdict_requested = detail_ == RuleDetail::Verdict;
          input_.depth_at_skip = nesting_;
          skipping_rules_ = true;
        }
        return push(Frame::RuleList);
      }
      if (key_ == Key::Base || key_ == Key::PolicyCounters) fail(key_ == Key::Base ? "base" : "policy_counters", "expected an object");
      if (key_ == Key::Comment) fail("comment", "expected a string");
      if (key_ == Key::Rules) fail("rules", "expected an array");
      return skip();  // unknown keys are ignored
    }
    if (at == Frame::RuleList) {
      ++rule_index_;
      if (array) return fail(nullptr, "expected an object"), skip();
      rule_ = Rule{};
      has_position_ = false;
      return push(Frame::Rule);
    }
    if (at == Frame::Rule) {
      if (key_ == Key::Match && !array) return push(Frame::Match);
      if (key_ == Key::Counters && !array) {
        rule_.counters = Counters{};
        counters_seen_ = 0;
        return push(Frame::RuleCounters);
      }
      if (key_ == Key::Match || key_ == Key::Counters) fail(key_ == Key::Match ? "match" : "counters", "expected an object");
      return skip();
    }
    if (at == Frame::Match) {
      if ((key_ == Key::Source || key_ == Key::Destination) && !array) {
        prefix_is_source_ = key_ == Key::Source;
        (prefix_is_source_ ? rule_.match.source : rule_.match.destination) = Prefix{};
        has_cidr_ = false;
        return push(Frame::Prefix);
      }
      if (key_ == Key::Modules && array) return push(Frame::Modules);
      if (key_ == Key::Source || key_ == Key::Destination) {
        fail(key_ == Key::Source ? "source" : "destination", "expected an object");
      }
      if (key_ == Key::Modules) fail("modules", "expected an array");
      return skip();
    }
    if (at == Frame::Base) {
      if (key_ == Key::Devices && array) return push(Frame::Devices);
      if (key_ == Key::Devices) fail("devices", "expected an array");
      return skip();
    }
    if (at == Frame::Modules || at == Frame::Devices) fail(nullptr, "expected a string");
    return skip();
  }

  bool close() {
    if (skip_ > 0) {
      --skip_;
      return true;
    }
    const Frame f = frames_.back();
    frames_.pop_back();
    switch (f) {
      case Frame::ChainList:
        chain_index_ = 0;
        break;  // back to the DOM
      case Frame::RuleList:
        if (skipping_rules_ && detail_ == RuleDetail::Verdict) {
          // The scan kept the verdict fields: the rules are read, not dropped.
          skipping_rules_ = false;
          chain_.rules = std::move(input_.verdict_rules);
          input_.verdict_rules = {};
          if (input_.verdict_error) {
            frames_.push_back(Frame::RuleList);
            frames_.push_back(Frame::Rule);
            rule_index_ = static_cast<int>(input_.verdict_error->rule);
            const std::string& field = input_.verdict_error->field;
            fail(field.empty() ? nullptr : field.c_str(), input_.verdict_error->what);
            frames_.pop_back();
            frames_.pop_back();
            input_.verdict_error.reset();
          }
        } else if (skipping_rules_) {
          skipping_rules_ = false;
          rules_dropped_ = true;
          skipped_rules_ = input_.skipped_objects;
        }
        break;
      case Frame::Chain:
        finish_chain();
        ++chain_index_;
        break;
      case Frame::PolicyCounters:
      case Frame::RuleCounters:
        frames_.push_back(f);
        if (!(counters_seen_ & 1)) fail(nullptr, "missing key 'packets'");
        else if (!(counters_seen_ & 2)) fail(nullptr, "missing key 'bytes'");
        frames_.pop_back();
        break;
      case Frame::Prefix:
        frames_.push_back(f);
        if (!has_cidr_) fail(nullptr, "missing key 'cidr'");
        frames_.pop_back();
        break;
      case Frame::Rule:
        frames_.push_back(f);
        finish_rule();
        frames_.pop_back();
        break;
      default:
        break;
    }
    return true;
  }

  void finish_rule() {
    if (!has_position_) fail(nullptr, "missing key 'position'");
    static const char* kinds[] = {"jump", "goto", "verdict", "target", "vmap", "none"};
    if (std::find(std::begin(kinds), std::end(kinds), rule_.verdict_kind) == std::end(kinds)) {
      fail("verdict_kind", "unknown verdict_kind '" + rule_.verdict_kind + "'");
    }
    chain_.rules.push_back(detail_ == RuleDetail::Verdict ? verdict_only(std::move(rule_)) : std::move(rule_));
  }

  static Rule verdict_only(Rule&& r) {
    Rule v;
    v.position = r.position;
    v.verdict_kind = std::move(r.verdict_kind);
    v.target = std::move(r.target);
    v.target_args = std::move(r.target_args);  // a DNAT's --to-destination: verify's endpoints
    return v;
  }

  void finish_chain() {
    frames_.push_back(Frame::Chain);
    if (!has_name_) fail(nullptr, "missing key 'name'");
    const uint64_t in_file = rules_dropped_ ? skipped_rules_ : chain_.rules.size();
    if (!has_rule_count_) chain_.rule_count = in_file;
    if (recorded_in_file_ && chain_.rule_count != in_file) {
      fail("rule_count", "rule_count " + std::to_string(chain_.rule_count) + " but " + std::to_string(in_file) +
                             " rules recorded");
    }
    // Rules before the name were read in full; trim them now.
    const RuleDetail detail = rules_dropped_                 ? RuleDetail::None
                              : !options_.rule_detail ? RuleDetail::Full
                                                      : options_.rule_detail(chain_.name);
    chain_.rules_recorded = recorded_in_file_ && detail != RuleDetail::None;
    if (detail == RuleDetail::None) chain_.rules.clear();
    if (detail == RuleDetail::Verdict && detail_ == RuleDetail::Full) {
      for (auto& r : chain_.rules) r = verdict_only(std::move(r));
    }
    chain_.rules.shrink_to_fit();       // a 20k-rule chain grown by doubling wastes up to half
    frames_.pop_back();
    table_chains().push_back(std::move(chain_));
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  size_t nesting_ = 0;
  const LoadOptions& options_;
  InputControl& input_;

  // DOM side: depth and the key at each depth, enough to find the chains.
  int depth_ = 0;
  std::string path_key_[kPathDepth];
  int table_index_ = -1;

  // Chain side.
  std::vector<Frame> frames_;
  int skip_ = 0;  // > 0: inside a value being ignored, its nesting depth
  Key key_ = Key::Other;
  Chain chain_;
  Rule rule_;
  int chain_index_ = 0;
  int rule_index_ = -1;
  bool has_name_ = false, has_rule_count_ = false, has_position_ = false, has_cidr_ = false;
  bool prefix_is_source_ = false;
  int counters_seen_ = 0;
  RuleDetail detail_ = RuleDetail::Full;  // of the chain's rules being read
  bool recorded_in_file_ = true;  // the file's rules_recorded (comes after rules)
  bool skipping_rules_ = false, rules_dropped_ = false;
  uint64_t skipped_rules_ = 0;
};

// Line and column of a byte offset, read again from the start (only on error).
TextPosition position_of_byte(std::istream& in, size_t byte) {
  TextPosition at;
  char buf[1 << 16];
  size_t seen = 0;
  while (seen < byte && in) {
    in.read(buf, static_cast<std::streamsize>(std::min(sizeof buf, byte - seen)));
    const auto n = static_cast<size_t>(in.gcount());
    if (n == 0) break;
    const std::string_view chunk(buf, n);
    const size_t last_newline = chunk.rfind('\n');
    if (last_newline == std::string_view::npos) {
      at.column += n;
    } else {
      at.line += static_cast<size_t>(std::count(chunk.begin(), chunk.end(), '\n'));
      at.column = n - last_newline;
    }
    seen += n;
  }
  return at;
}

// Parses `input`; `reopen()` gives the input again to find the line of a
// syntax error.
template <typename Reopen>
Snapshot read_snapshot(Input&& input, InputControl& in, Reopen reopen, const std::string& origin,
                       const LoadOptions& options) {
  json root;
  nlohmann::detail::parser<json, Input> parser(std::move(input), nullptr, false);
  SnapshotSax sax(root, options, in);
  bool ok = false;
  try {
    ok = parser.sax_parse(&sax, true);
  } catch (const json::exception& e) {
    throw InputError(origin, 0, std::string("invalid JSON: ") + e.what());
  }
  if (in.read_error) throw InputError(origin, 0, std::string("read failed: ") + std::strerror(in.read_error));
  if (sax.too_deep || in.too_deep) throw InputError(origin, 0, too_deep_message());
  if (!in.skip_error.empty()) {
    // In a skipped rules array: the lexer saw an early end there.
    const size_t byte = (sax.syntax_error ? sax.syntax_error->first : 0) + in.skipped_bytes;
    auto again = reopen();
    const TextPosition at = position_of_byte(*again, byte ? byte - 1 : 0);
    throw InputError(origin, at.line, at.column, "invalid JSON: " + in.skip_error);
  }
  if (!ok || sax.syntax_error) {
    const size_t byte = (sax.syntax_error ? sax.syntax_error->first : 0) + in.skipped_bytes;
    const std::string what = sax.syntax_error ? sax.syntax_error->second : "invalid JSON: unexpected end of input";
    auto again = reopen();
    const TextPosition at = position_of_byte(*again, byte ? byte - 1 : 0);
    throw InputError(origin, at.line, at.column, what);
  }
  Snapshot s = from_json(root, origin);  // schema first: a v3 file is "unsupported", not a chain error
  // A newer minor version only adds fields; say which ones this dpscope ignores.
  if (options.warn && s.schema != kSchema && s.schema != kSchemaV1 && s.schema != kSchemaV2_1 &&
      s.schema != kSchemaV2_2 && s.schema != kSchemaV2_3) {
    const auto unknown = unknown_fields(root, s);
    if (!unknown.empty()) {
      std::string list;
      for (size_t i = 0; i < unknown.size() && i < 8; ++i) list += (i ? ", " : "") + unknown[i];
      if (unknown.size() > 8) list += ", ... (" + std::to_string(unknown.size() - 8) + " more)";
      options.warn(inert(origin + ": schema \"" + s.schema + "\" is newer than this dpscope's \"" + kSchemaV2_3 + "\": " +
                   std::to_string(unknown.size()) + " unknown field" + (unknown.size() == 1 ? "" : "s") +
                   " ignored (" + list + ")"));  // field names come from the file
    }
  }
  if (!sax.chain_error.empty()) throw InputError(origin, 0, sax.chain_error);
  for (size_t i = 0; i < sax.chains.size() && i < s.netfilter.tables.size(); ++i) {
    s.netfilter.tables[i].chains = std::move(sax.chains[i]);
  }
  return s;
}

}  // namespace

Snapshot from_json_text(const std::string& text, const std::string& origin, const LoadOptions& options) {
  InputControl control;
  return read_snapshot(Input(std::string_view(text), control), control, [&] { return std::make_unique<std::istringstream>(text); }, origin,
                       options);
}

Snapshot load_snapshot(const std::string& path, const LoadOptions& options) {
  const std::string origin = path == "-" ? "<stdin>" : path;
  if (path == "-") return from_json_text(read_file(path), origin, options);  // decompressed when compressed
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) throw InputError(path, 0, "is a directory, expected a file");
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd) throw InputError(path, 0, std::string("cannot open: ") + std::strerror(errno));
  char head[4];
  const ssize_t got = ::pread(fd.get(), head, sizeof head, 0);
  const Compression compression =
      got > 0 ? compression_of(std::string_view(head, static_cast<size_t>(got))) : Compression::None;
  if (compression != Compression::None) {
    // Decompressed as it is read; a syntax error's line is counted in the
    // decompressed text (read again, whole, only then).
    Decompressor source(compression, fd.get(), origin);
    InputControl control;
    return read_snapshot(Input(source, control), control,
                         [&] { return std::make_unique<std::istringstream>(read_file(path)); }, origin, options);
  }
  InputControl control;
  return read_snapshot(Input(fd.get(), control), control, [&] { return std::make_unique<std::ifstream>(path, std::ios::binary); }, origin,
                       options);
}

}  // namespace dpscope::model
