// Renderers of `dpscope check` results.
#pragma once

#include <string>
#include <vector>

#include "analysis/check.h"
#include "reports/render.h"

namespace dpscope::reports {

// One node's result. Text and Markdown: its own block; JSON and CSV: the same
// document as render_checks of one node (a script reads one shape whatever
// the number of nodes). Text output wraps at opt.width (sentences; ids and
// numbers never cut). opt.color: PASS green, FAIL red (text only).
std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f,
                         const TextOptions& opt = {});

struct CheckedNode {
  analysis::CheckResult result;
  std::string source;
};

// Any number of nodes (one file, a folder, several files): text and Markdown
// print each node's result as render_check does, then, for more than one, a
// verdict line; JSON is one "dpscope.check/v2" document with the results in
// `results`, CSV one row per problem, passed check, leftover and cleanup with
// node and source columns (docs/report-schema.md).
std::string render_checks(const std::vector<CheckedNode>& nodes, Format f, const TextOptions& opt = {});

}  // namespace dpscope::reports
