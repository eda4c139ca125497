#include <iostream>

#include "cli/command_table.h"
#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/version.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

// Messages of bad input, in dpscope's words (never the JSON library's ids).
int bad_input(const std::exception& e) {
  std::cerr << "dpscope: " << in_tool_words(e.what()) << "\n";
  return kExitBadInput;
}

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{kProgramDescription, "dpscope"};
  // CLI11 ends the text with its own newline.
  app.set_version_flag(
      "--version",
      [] {
        std::string v = version_text();
        if (!v.empty() && v.back() == '\n') v.pop_back();
        return v;
      },
      "version, git commit, libraries, kernel features");
  app.require_subcommand(1);
  Runner run;
  build_app(app, run);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitBadInput;
  } catch (const InputError& e) {
    return bad_input(e);
  } catch (const UsageError& e) {
    return bad_input(e);
  }
  if (!run) {
    std::cerr << "dpscope: no command given; see dpscope --help\n";
    return kExitBadInput;
  }
  try {
    return run();
  } catch (const InputError& e) {
    return bad_input(e);
  } catch (const UsageError& e) {
    return bad_input(e);
  } catch (const SystemError& e) {
    std::cerr << "dpscope: " << e.what() << "\n";
    if (!e.hint().empty()) std::cerr << "hint: " << e.hint() << "\n";
    return kExitInternal;
  } catch (const std::exception& e) {
    std::cerr << "dpscope: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace dpscope::cli
