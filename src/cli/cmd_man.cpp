// dpscope man: dpscope(1) in roff on stdout.
#include <iostream>

#include "cli/cli_doc.h"
#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

void add_man(CLI::App* sub, Runner& run, CLI::App& root) {
  sub->callback([&run, &root] {
    run = [&root] {
      std::cout << man_page(root);
      return kExitOk;
    };
  });
}

}  // namespace dpscope::cli
