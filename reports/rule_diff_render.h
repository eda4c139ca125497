// `dpscope compare --rules`: the rule-level differences of analysis::diff_rules
// in every format (text, markdown, json "dpscope.rule-diff/v1", csv, html).
#pragma once

#include <string>
#include <vector>

#include "analysis/rule_diff.h"
#include "reports/comparison.h"
#include "reports/render.h"

namespace dpscope::reports {

struct RuleDiffView {
  std::vector<std::string> labels;   // one per side
  std::vector<std::string> sources;  // the files
  analysis::RuleDiff diff;
};

RuleDiffView rule_diff_view(const std::vector<SideInput>& inputs);
std::string render_rule_diff(const RuleDiffView& v, Format f, const TextOptions& opt = {});

}  // namespace dpscope::reports
