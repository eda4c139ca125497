// Placeholder: replaced by the implementation of `dpscope scale`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_scale(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("scale", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope scale: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
