// Placeholder: replaced by the implementation of `dpscope snapshot`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_snapshot(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("snapshot", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope snapshot: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
