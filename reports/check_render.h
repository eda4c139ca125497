// Renderers of `dpscope check` results.
#pragma once

#include <string>
#include <vector>

#include "analysis/check.h"
#include "reports/render.h"

namespace dpscope::reports {

// Text output wraps at opt.width (sentences; ids and numbers never cut).
// opt.color: PASS green, FAIL red (text only).
std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f,
                         const TextOptions& opt = {});

struct CheckedNode {
  analysis::CheckResult result;
  std::string source;
};

// Several nodes (a folder, or several files): each node's result as
// render_check prints it, then one verdict line; JSON is one
// "dpscope.check-nodes/v1" document with the results in `results`, CSV gets a
// node column.
std::string render_checks(const std::vector<CheckedNode>& nodes, Format f, const TextOptions& opt = {});

}  // namespace dpscope::reports
