// Renderers of `dpscope check` results.
#pragma once

#include <string>

#include "analysis/check.h"
#include "reports/render.h"

namespace dpscope::reports {

// Text output wraps at opt.width (sentences; ids and numbers never cut).
std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f,
                         const TextOptions& opt = {});

}  // namespace dpscope::reports
