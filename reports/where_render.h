// Renderer of `dpscope where` results.
#pragma once

#include <string>
#include <vector>

#include "analysis/where.h"
#include "reports/render.h"

namespace dpscope::reports {

struct WhereNode {
  std::string label;                     // node name or file
  std::string source;
  std::vector<analysis::Place> places;
  std::vector<std::string> not_searched; // "netfilter: not collected", "ebpf: unavailable (EPERM ...)"
};

// Text output wraps at opt.width.
std::string render_where(const std::string& query, const std::vector<WhereNode>& nodes, Format f,
                         const TextOptions& opt = {});

}  // namespace dpscope::reports
