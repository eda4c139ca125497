// `dpscope compare --intent INTENT`: the verify summary of each side as rows
// of the comparison (section "intent", ids in docs/report-schema.md), so every
// renderer prints them. A side is one node, or a cluster folder's nodes summed.
#pragma once

#include <vector>

#include "analysis/verify.h"
#include "reports/comparison.h"

namespace dpscope::reports {

// `per_side[i]` is side i's verification (one node, or each node of its folder).
void add_intent_rows(Comparison& c, const std::vector<analysis::ClusterVerification>& per_side);

}  // namespace dpscope::reports
