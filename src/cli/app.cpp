#include <iostream>

#include "cli/commands.h"
#include "util/error.h"

namespace dpscope::cli {

namespace {

constexpr const char* kFooter = R"(Exit codes:
  0  success
  1  a check or comparison gate failed (dpscope check)
  2  bad usage or bad input (messages are FILE:LINE: what is wrong)
  3  snapshot taken but incomplete: a section is unavailable (see "unavailable")
  4  internal error
  5  snapshot written, but nothing could be read (every section unavailable: no privilege)

Examples:
  dpscope snapshot -o node.json                 # this node, read-only
  dpscope import --iptables-save nat.txt -o a.json
  dpscope compare kube-proxy.json cilium.json --format markdown
  dpscope check node.json --expect kube-proxy-free)";

}  // namespace

int run_main(int argc, char** argv) {
  CLI::App app{
      "dpscope: what does this node's packet dataplane really contain, and how does it compare to that one?\n"
      "Snapshots netfilter (iptables nft/legacy, nftables) and eBPF state, stores it as versioned JSON,\n"
      "and renders side-by-side reports for kube-proxy -> eBPF migrations.",
      "dpscope"};
  app.footer(kFooter);
  app.set_version_flag("--version", std::string("dpscope ") + DPSCOPE_VERSION);
  app.require_subcommand(1);
  Runner run;
  register_snapshot(app, run);
  register_import(app, run);
  register_compare(app, run);
  register_check(app, run);
  register_where(app, run);
  register_scale(app, run);
  register_verify(app, run);

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
    std::cerr << "dpscope: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::cerr << "dpscope: " << e.what() << "\n";
    return kExitBadInput;
  }
  if (!run) {
    std::cerr << "dpscope: no command given; see dpscope --help\n";
    return kExitBadInput;
  }
  try {
    return run();
  } catch (const InputError& e) {
    std::cerr << "dpscope: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const UsageError& e) {
    std::cerr << "dpscope: " << e.what() << "\n";
    return kExitBadInput;
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
