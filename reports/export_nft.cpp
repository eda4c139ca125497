#include "reports/export_nft.h"

#include <algorithm>
#include <array>
#include <cstdlib>

#include "util/error.h"

namespace dpscope::reports {

namespace {

struct PrioTag {
  int value;
  const char* name;
};
// rule.c std_prios and bridge_std_prios (NF_IP_PRI_*, NF_BR_PRI_*).
constexpr std::array<PrioTag, 6> kStdPrios = {{{-300, "raw"}, {-150, "mangle"}, {-100, "dstnat"}, {0, "filter"},
                                               {50, "security"}, {100, "srcnat"}}};
constexpr std::array<PrioTag, 4> kBridgePrios = {{{-300, "dstnat"}, {-200, "filter"}, {100, "out"}, {300, "srcnat"}}};

// rule.c std_prio_family_hook_compat.
bool prio_compatible(int prio, const std::string& family, const std::string& hook) {
  if (family == "bridge") {
    switch (prio) {
      case -300: return hook == "prerouting";
      case -200: return true;
      case 100: return hook == "output";
      case 300: return hook == "postrouting";
      default: return false;
    }
  }
  const bool inet = family == "inet" || family == "ip" || family == "ip6";
  switch (prio) {
    case 0: return inet || family == "arp" || family == "netdev";
    case -300: case -150: case 50: return inet;
    case -100: return inet && hook == "prerouting";
    case 100: return inet && hook == "postrouting";
    default: return false;
  }
}

// set_expr_print's line breaks (expression.c calculate_delim): after every
// fifth element of a set of small numbers, every second of addresses and
// states, after each of anything else.
size_t elements_per_line(const std::vector<std::string>& key_type) {
  if (key_type.size() != 1) return 1;
  static constexpr std::array<std::string_view, 13> kFive = {
      "nf_proto", "integer", "arp_op", "inet_proto", "inet_service", "tcp_flag", "dccp_pkttype",
      "mark",     "iface_index", "classid", "uid", "gid", "ct_dir"};
  static constexpr std::array<std::string_view, 4> kTwo = {"ipv4_addr", "ct_state", "ct_status", "pkt_type"};
  const std::string& t = key_type[0];
  if (std::find(kFive.begin(), kFive.end(), t) != kFive.end()) return 5;
  if (std::find(kTwo.begin(), kTwo.end(), t) != kTwo.end()) return 2;
  return 1;
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) out += (i ? sep : "") + v[i];
  return out;
}

std::string element_text(const model::SetElement& e) {
  std::string out = e.key;
  if (!e.statements.empty()) out += " " + e.statements;
  if (!e.timeout.empty()) out += " timeout " + e.timeout;
  if (!e.comment.empty()) out += " comment \"" + e.comment + "\"";
  if (!e.value.empty()) out += " : " + e.value;
  return out;
}

template <typename T>
std::vector<const T*> by_handle(const std::vector<T>& items) {
  std::vector<const T*> out;
  for (const auto& x : items) out.push_back(&x);
  std::stable_sort(out.begin(), out.end(), [](const T* a, const T* b) { return a->handle < b->handle; });
  return out;
}

class TablePrinter {
 public:
  TablePrinter(const model::Table& t, const std::string& source) : t_(t), source_(source) {}

  std::string print() {
    const std::string where = "nftables table " + t_.family + " " + t_.name;
    if (std::find(t_.flags.begin(), t_.flags.end(), "owner") != t_.flags.end()) {
      fail("its owner flag: nft prints the owning process's name, which the snapshot does not hold");
    }
    out_ = "table " + t_.family + " " + t_.name + " {\n";
    const char* delim = "";
    if (!t_.flags.empty()) {
      out_ += "\tflags " + join(t_.flags, ",") + "\n";
      delim = "\n";
    }
    if (!t_.comment.empty()) out_ += "\tcomment \"" + t_.comment + "\"\n";
    for (const model::NftObject* o : by_handle(t_.objects)) {
      out_ += delim, delim = "\n";
      object(*o);
    }
    for (const model::NftSet* s : by_handle(t_.sets)) {
      if (!s->declaration) continue;  // an anonymous set, printed inside its rule
      out_ += delim, delim = "\n";
      set(*s);
    }
    for (const model::NftFlowtable* f : by_handle(t_.flowtables)) {
      out_ += delim, delim = "\n";
      flowtable(*f);
    }
    for (const model::Chain* c : by_handle(t_.chains)) {
      out_ += delim, delim = "\n";
      chain(*c);
    }
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(source_, 0, "nftables table " + t_.family + " " + t_.name + ": " + what + ": nothing exact to export");
  }

  void object(const model::NftObject& o) {
    if (!o.undecoded.empty()) fail(o.kind + " " + o.name + " is not decoded (" + o.undecoded + ")");
    out_ += "\t" + o.kind + " " + o.name + " {";
    if (!o.comment.empty()) out_ += "\n\t\tcomment \"" + o.comment + "\"";
    out_ += "\n";
    for (const auto& line : o.lines) out_ += "\t\t" + line + "\n";
    out_ += "\t}\n";
  }

  void set(const model::NftSet& s) {
    const model::NftSetDeclaration& d = *s.declaration;
    const std::string what = (s.is_map ? "map " : "set ") + s.name;
    if (!d.undecoded.empty()) fail(what + ": its declaration is not decoded (" + d.undecoded + ")");
    if (!s.elements_unread.empty()) fail(what + ": its elements were not read (" + s.elements_unread + ")");
    if (!s.elements_undecoded.empty()) fail(what + ": its elements are not decoded (" + s.elements_undecoded + ")");
    if (!s.elements_recorded) fail(what + ": its elements were counted, not recorded");
    auto has = [&](const char* flag) { return std::find(d.flags.begin(), d.flags.end(), flag) != d.flags.end(); };
    out_ += "\t" + what + " {\n\t\t";
    out_ += d.key_typeof.empty() ? "type " + join(s.key_type, " . ") : "typeof " + d.key_typeof;
    if (s.is_map) {
      out_ += " : ";
      if (d.data_interval) out_ += "interval ";
      out_ += d.data_typeof.empty() ? s.data_type : d.data_typeof;
    }
    out_ += "\n";
    if (!has("constant")) {
      if (!d.policy.empty()) out_ += "\t\tpolicy " + d.policy + "\n";
      if (d.size) out_ += "\t\tsize " + std::to_string(d.size) + "\n";
    }
    // With a default timeout the timeout flag alone goes without saying; with
    // another flag nft prints it too (it tests a copy of the flags without
    // it, then prints the set's own).
    const bool flags_line = std::any_of(d.flags.begin(), d.flags.end(),
                                        [&](const std::string& f) { return f != "timeout" || d.timeout.empty(); });
    if (flags_line) out_ += "\t\tflags " + join(d.flags, ",") + "\n";
    if (!d.statements.empty()) out_ += "\t\t" + d.statements + "\n";
    if (d.auto_merge) out_ += "\t\tauto-merge\n";
    if (!d.timeout.empty()) out_ += "\t\ttimeout " + d.timeout + "\n";
    if (!d.gc_interval.empty()) out_ += "\t\tgc-interval " + d.gc_interval + "\n";
    if (!s.comment.empty()) out_ += "\t\tcomment \"" + s.comment + "\"\n";
    if (!s.elements.empty()) {
      const size_t per_line = elements_per_line(s.key_type);
      out_ += "\t\telements = { ";
      for (size_t i = 0; i < s.elements.size(); ++i) {
        if (i) out_ += i % per_line == 0 ? ",\n\t\t\t     " : ", ";
        out_ += element_text(s.elements[i]);
      }
      out_ += " }\n";
    }
    out_ += "\t}\n";
  }

  void flowtable(const model::NftFlowtable& f) {
    out_ += "\tflowtable " + f.name + " {\n";
    out_ += "\t\thook " + f.hook + " priority " + nft_priority_text("netdev", f.hook, f.priority) + "\n";
    if (!f.devices.empty()) out_ += "\t\tdevices = { " + join(f.devices, ", ") + " }\n";
    if (f.offload) out_ += "\t\tflags offload\n";
    if (f.counter) out_ += "\t\tcounter\n";
    out_ += "\t}\n";
  }

  void chain(const model::Chain& c) {
    if (!c.rules_recorded) fail("chain " + c.name + ": its " + std::to_string(c.rule_count) + " rules were counted, not recorded");
    out_ += "\tchain " + c.name + " {";
    if (c.comment) out_ += "\n\t\tcomment \"" + *c.comment + "\"";
    out_ += "\n";
    if (c.base) {
      const model::BaseChain& b = *c.base;
      out_ += "\t\ttype " + b.type + " hook " + b.hook;
      if (b.devices.size() == 1) out_ += " device \"" + b.devices[0] + "\"";
      if (b.devices.size() > 1) out_ += " devices = { " + join(b.devices, ", ") + " }";
      out_ += " priority " + nft_priority_text(t_.family, b.hook, b.priority) + ";";
      if (!b.policy.empty()) out_ += " policy " + b.policy + ";";
      if (b.offload) out_ += " flags offload;";
      out_ += "\n";
    }
    for (const model::Rule& r : c.rules) {
      if (r.text.empty()) {
        fail("chain " + c.name + " rule " + std::to_string(r.position) + " has no text" +
             (r.raw.empty() ? std::string() : " (" + r.raw.substr(0, r.raw.find("): ") + 1) + ")"));
      }
      out_ += "\t\t" + r.text + "\n";
    }
    out_ += "\t}\n";
  }

  const model::Table& t_;
  const std::string& source_;
  std::string out_;
};

}  // namespace

std::string nft_priority_text(const std::string& family, const std::string& hook, int32_t priority) {
  auto named = [&](const auto& tags) -> std::string {
    for (const PrioTag& tag : tags) {
      if (std::abs(priority - tag.value) > 10) continue;
      // The first standard priority within reach decides, compatible or not.
      if (!prio_compatible(tag.value, family, hook)) break;
      const int offset = priority - tag.value;
      std::string out = tag.name;
      if (offset > 0) out += " + " + std::to_string(offset);
      if (offset < 0) out += " - " + std::to_string(-offset);
      return out;
    }
    return std::to_string(priority);
  };
  return family == "bridge" ? named(kBridgePrios) : named(kStdPrios);
}

SaveExport export_nft_ruleset(const model::Snapshot& s, const std::string& source) {
  if (!s.netfilter.collected) {
    throw InputError(source, 0, "the netfilter section was not collected: there is no nftables text to export");
  }
  for (const auto& u : s.unavailable) {
    if (u.section == "netfilter" || u.section == "netfilter.nftables" || u.section == "netfilter.consistency") {
      throw InputError(source, 0, u.section + " was not read (" + u.reason + "): its nftables tables cannot be exported");
    }
  }
  SaveExport out;
  std::vector<const model::Table*> tables;
  std::vector<std::string> iptables;
  for (const auto& t : s.netfilter.tables) {
    if (t.backend == model::Backend::Nftables) tables.push_back(&t);
    if (t.backend == model::Backend::IptablesNft) iptables.push_back(t.family + " " + t.name);
  }
  for (const model::Table* t : tables) {
    if (!t->declarations_recorded) {
      throw InputError(source, 0,
                       "nftables table " + t->family + " " + t->name +
                           ": its declarations (chain comments, set flags and typeof, objects, flowtables) are not "
                           "recorded: " +
                           (s.node.source == "import"
                                ? "an import of nft -j cannot hold them (nft 1.0.6's JSON leaves some out); export a "
                                  "live snapshot (dpscope snapshot) instead"
                                : "the snapshot was written before dpscope.snapshot/v2.3; take it again"));
    }
  }
  std::stable_sort(tables.begin(), tables.end(),
                   [](const model::Table* a, const model::Table* b) { return a->handle < b->handle; });
  for (const model::Table* t : tables) out.text += TablePrinter(*t, source).print();
  if (!iptables.empty()) {
    out.notes.push_back("left out the iptables-nft tables (" + join(iptables, ", ") +
                        "): their text is iptables-save's (--format iptables-save / ip6tables-save)");
  }
  if (tables.empty()) out.notes.push_back("no native nftables tables in " + source + ": nft list ruleset prints nothing of them");
  return out;
}

}  // namespace dpscope::reports
