// Renderers of `dpscope check` results.
#pragma once

#include <string>

#include "analysis/check.h"
#include "reports/render.h"

namespace dpscope::reports {

std::string render_check(const analysis::CheckResult& r, const std::string& source, Format f);

}  // namespace dpscope::reports
