// The sandbox of a front: its own user, no capabilities, no_new_privs, a Landlock ruleset
// that handles every filesystem right and grants none (no file can be opened, not even
// read), denies every TCP bind and connect and scopes abstract unix sockets and signals,
// and the front's seccomp allow-list (sandbox/seccomp_front_list.h). It is entered once the
// listening socket and the epoll set are in hand, before anything a client sent is read.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"

namespace scalws::front {

// `user` is who the front runs as (the controller's --front-user); root is refused.
common::Result<sandbox::SandboxPolicy> frontSandboxPolicy(const std::string& user);

// Raises the descriptor limit to its hard limit (descriptors in flight to the workers count
// against it), makes the process non-dumpable, then applies the policy. The calling
// process must be single-threaded.
common::Result<sandbox::SandboxReport> enterFrontSandbox(const std::string& user);

// What the sandbox in force refuses, tried for real: an open of a file and of a directory,
// a new socket, a connect, a bind. One line each ("open /etc/passwd: refused (Permission
// denied)"); a line says "ALLOWED" when something went through.
std::vector<std::string> probeFrontSandbox();

}  // namespace scalws::front
