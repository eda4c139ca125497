// Which processes are dataplane agents: one table of names, read by the
// collector. It lives here, not in analysis, because it decides what is
// collected at all: a node runs hundreds of processes, and recording every
// one's command line would bloat the snapshot and copy arguments (tokens,
// paths) of programs that are none of dpscope's business.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dpscope::proc {

struct AgentPattern {
  std::string_view name;       // exact executable name, or a prefix when it ends in '*'
  std::string_view agent;      // recorded name ("cilium-operator" for every cilium-operator-*)
  std::string_view dataplane;  // "cilium", "calico", ...
};

const std::vector<AgentPattern>& agent_patterns();

struct AgentMatch {
  std::string agent;
  std::string dataplane;
  std::string matched_by;  // "exe" | "comm" | "cmdline"
};

// Tries the executable's base name, then comm (cut to 15 characters by the
// kernel: a 15-character comm matches a longer name it begins), then argv[0]'s
// base name. Empty strings are skipped.
std::optional<AgentMatch> match_agent(std::string_view exe, std::string_view comm, std::string_view argv0);

}  // namespace dpscope::proc
