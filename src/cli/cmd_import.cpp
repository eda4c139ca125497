// Placeholder: replaced by the implementation of `dpscope import`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_import(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("import", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope import: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
