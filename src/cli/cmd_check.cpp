// Placeholder: replaced by the implementation of `dpscope check`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_check(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("check", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope check: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
