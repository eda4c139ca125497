// Counts taken straight from iptables-save text with plain line matching, so
// tests can check dpscope against numbers it did not compute.
#pragma once

#include <map>
#include <sstream>
#include <string>

namespace dpscope::test {

struct IptablesTextCounts {
  std::map<std::string, int> rules_per_table;   // "-A" lines per "*table"
  std::map<std::string, int> chains_per_table;  // ":NAME" declarations per table
  int rules = 0;
  int chains = 0;
  int kube_chains = 0;       // ":KUBE-*"
  int kube_svc_chains = 0;   // ":KUBE-SVC-*"
  int kube_sep_chains = 0;   // ":KUBE-SEP-*"
  int cilium_chains = 0;     // ":CILIUM_*"
  int service_ip_rules = 0;  // "-A KUBE-SERVICES -d a.b.c.d/32" (or /128)
  bool operator==(const IptablesTextCounts&) const = default;
};

inline IptablesTextCounts count_iptables_save(const std::string& text) {
  IptablesTextCounts c;
  std::istringstream in(text);
  std::string line, table;
  auto starts = [](const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; };
  while (std::getline(in, line)) {
    if (starts(line, "*")) {
      table = line.substr(1);
      c.rules_per_table[table] += 0;
    } else if (starts(line, ":")) {
      c.chains += 1;
      c.chains_per_table[table] += 1;
      if (starts(line, ":KUBE-")) c.kube_chains += 1;
      if (starts(line, ":KUBE-SVC-")) c.kube_svc_chains += 1;
      if (starts(line, ":KUBE-SEP-")) c.kube_sep_chains += 1;
      if (starts(line, ":CILIUM_")) c.cilium_chains += 1;
    } else if (starts(line, "-A ")) {
      c.rules += 1;
      c.rules_per_table[table] += 1;
      if (starts(line, "-A KUBE-SERVICES -d ")) {
        std::string dst = line.substr(20, line.find(' ', 20) - 20);
        bool v6 = dst.find(':') != std::string::npos;
        if (dst.size() > 3 && ((!v6 && dst.substr(dst.size() - 3) == "/32") ||
                               (v6 && dst.size() > 4 && dst.substr(dst.size() - 4) == "/128"))) {
          c.service_ip_rules += 1;
        }
      }
    }
  }
  return c;
}

}  // namespace dpscope::test
