// Placeholder: replaced by the implementation of `dpscope compare`.
#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void register_compare(CLI::App& app, Runner& run) {
  auto* sub = app.add_subcommand("compare", "(not yet implemented)");
  sub->callback([&run] {
    run = [] {
      std::cerr << "dpscope compare: not implemented yet\n";
      return kExitInternal;
    };
  });
}

}  // namespace dpscope::cli
