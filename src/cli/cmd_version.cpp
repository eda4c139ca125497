// dpscope version [-j]: the same text as --version, or its JSON form.
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/version.h"
#include "util/error.h"

namespace dpscope::cli {

void add_version(CLI::App* sub, Runner& run, CLI::App&) {
  auto json = std::make_shared<bool>(false);
  sub->add_flag("-j,--json", *json, "JSON (\"dpscope.version/v1\") instead of text");
  sub->callback([json, &run] {
    run = [json] {
      std::cout << (*json ? version_json().dump(2) + "\n" : version_text());
      return kExitOk;
    };
  });
}

}  // namespace dpscope::cli
