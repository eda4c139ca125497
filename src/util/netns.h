// Entering a namespace: the one place dpscope does it. A namespace is entered
// by a thread made for the job, never by the caller's thread, so the rest of
// dpscope stays where it started; that thread's sockets (and the threads it
// starts) stay in the namespace, and it simply ends instead of switching back.
#pragma once

#include <functional>
#include <string>

#include "util/fd.h"

namespace dpscope {

// The file of a network namespace given as a name (/run/netns/NAME), a path,
// or a PID (/proc/PID/ns/net): what every --netns means.
std::string netns_path(const std::string& spec);

// Opens that file. Throws UsageError when it does not exist or is not a
// network namespace.
UniqueFd open_netns(const std::string& spec);

// Runs `work` on a new thread that first enters the namespace `ns` (of type
// `nstype`: CLONE_NEWNET, CLONE_NEWCGROUP), and waits for it. An empty `ns`:
// the thread stays in the caller's namespaces. Returns 0, or setns's errno
// (then `work` has not run). Exceptions of `work` reach the caller.
int run_in_namespace(const UniqueFd& ns, int nstype, const std::function<void()>& work);

// The reason a collector records when entering network namespace `spec`
// failed with `err`, and its hint.
std::string netns_enter_failure(const std::string& spec, int err);
inline constexpr const char* kNetnsEnterHint = "entering a network namespace needs CAP_SYS_ADMIN: run as root";

}  // namespace dpscope
