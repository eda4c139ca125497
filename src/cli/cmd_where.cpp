// Placeholder: replaced by the implementation of `dpscope where`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_where(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("where", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope where: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
