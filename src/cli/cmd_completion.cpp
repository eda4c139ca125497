// dpscope completion bash|zsh|fish: the shell's completion script on stdout.
#include <iostream>
#include <memory>

#include "cli/cli_doc.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "util/error.h"

namespace dpscope::cli {

void add_completion(CLI::App* sub, Runner& run, CLI::App& root) {
  auto shell = std::make_shared<std::string>();
  sub->add_option("shell", *shell, "the shell to complete for")
      ->type_name(choice_type({"bash", "zsh", "fish"}))
      ->required();
  sub->callback([shell, &run, &root] {
    run = [shell, &root] {
      std::cout << completion_script(root, *shell);
      return kExitOk;
    };
  });
}

}  // namespace dpscope::cli
