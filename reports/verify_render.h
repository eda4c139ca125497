// Renderer of `dpscope verify` results: text, Markdown, JSON
// ("dpscope.verify/v1", finding ids in docs/verify.md), CSV, HTML.
#pragma once

#include <string>

#include "analysis/verify.h"
#include "reports/render.h"

namespace dpscope::reports {

std::string render_verify(const analysis::ClusterVerification& c, Format f, const TextOptions& opt = {});

}  // namespace dpscope::reports
