// `dpscope compare --services`: one row per service port, what each side
// programs for it (iptables rules and chains, nft map element, eBPF frontend
// and backends).
#pragma once

#include <string>
#include <vector>

#include "analysis/services.h"
#include "reports/comparison.h"
#include "reports/render.h"

namespace dpscope::reports {

struct ServiceRow {
  std::string name;   // "ns/name:port" when any side knows it, else ""
  std::string key;    // "10.96.0.1:443/tcp"
  std::vector<std::vector<analysis::ServiceProgramming>> per_side;  // what each side programs for it
};

struct ServicesView {
  std::vector<Side> sides;
  std::vector<ServiceRow> rows;
};

ServicesView services_view(const std::vector<SideInput>& inputs);
// Text: a table; when it is wider than opt.width, one block per service
// (its name and address, then a line per side), wrapped at spaces.
std::string render_services(const ServicesView& v, Format f, const TextOptions& opt = {});

}  // namespace dpscope::reports
