#include <iostream>

#include "cli/command_table.h"
#include "cli/commands.h"
#include "cli/input_hint.h"
#include "cli/usage_words.h"
#include "cli/version.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

// Messages of bad input, in dpscope's words (never the JSON library's ids).
int bad_input(const std::exception& e) {
  std::cerr << "dpscope: " << in_tool_words(e.what()) << "\n";
  return kExitBadInput;
}

// A bad command line of `command`: one voice with dpscope's own messages.
int bad_usage(const std::string& command, const std::string& what, bool with_help_hint) {
  std::cerr << usage_message(command, what, with_help_hint);
  return kExitBadInput;
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : command_table()) names.push_back(c.name);
  return names;
}

int unknown_command(const std::string& word) {
  std::string what = "unknown command \"" + word + "\"";
  const std::string near = nearest_name(word, command_names());
  if (!near.empty()) what += "\ndid you mean " + near + "?";
  return bad_usage("", what, true);
}

}  // namespace

int run_main(int argc, char** argv) {
  // The top level takes no option with a value, so the first word that is no
  // option is the command. `help [CMD]` is `[CMD] --help`, as in git and kubectl.
  std::vector<std::string> args(argv, argv + argc);
  if (args.size() >= 2 && args[1] == "help") {
    const bool of_command = args.size() > 2 && args[2] != "help";
    if (of_command && !find_command(args[2])) return unknown_command(args[2]);
    args = of_command ? std::vector<std::string>{args[0], args[2], "--help"} : std::vector<std::string>{args[0], "--help"};
  }
  std::string command;
  if (args.size() >= 2 && !args[1].empty() && args[1][0] != '-') {
    if (!find_command(args[1])) return unknown_command(args[1]);
    command = args[1];
  } else if (args.size() >= 2 && args[1] != "-h" && args[1] != "--help" &&
             args[1] != "-V" && args[1] != "--version") {
    // CLI11 would say "A subcommand is required" for a misspelt option.
    return bad_usage("", "unknown option " + args[1], true);
  }
  if (args.size() == 1) {
    std::string list;
    for (const auto& n : command_names()) list += (list.empty() ? "" : ", ") + n;
    return bad_usage("", "no command given (" + list + ")", true);
  }
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());

  CLI::App app{kProgramDescription, "dpscope"};
  // CLI11 ends the text with its own newline. -V as well: what curl, ssh and
  // cilium-agent answer to it.
  app.set_version_flag(
      "-V,--version",
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
    app.parse(static_cast<int>(cargs.size()), cargs.data());
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return bad_usage(command, parse_error_words(e), true);
  } catch (const InputError& e) {
    return bad_input(e);
  } catch (const UsageError& e) {
    return bad_usage(command, e.what(), false);
  }
  if (!run) return bad_usage("", "no command given", true);
  try {
    return run();
  } catch (const InputError& e) {
    return bad_input(e);
  } catch (const UsageError& e) {
    return bad_usage(command, e.what(), false);
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
