// The sandbox of a standalone worker: the policy derived from
// the site's config, checked before anything is forked, and entered by each serving process
// once its listeners, docroots and logs are open and before any loop thread exists.
#pragma once

#include <string>

#include "common/status.h"
#include "sandbox/sandbox_policy.h"
#include "sandbox/sandbox_report.h"
#include "worker/config_snapshot.h"

namespace scalws::worker {

// What the worker may do after start. Started as root without [server] user, the worker
// runs as "nobody" (as nginx does); user = "root" keeps root and says so.
common::Result<sandbox::SandboxPolicy> sandboxPolicyFor(const ConfigSnapshot& snapshot,
                                                        const std::string& config_path);

// Resolves the policy and checks it against the kernel (Landlock ABI for "required")
// without applying anything: a standalone parent calls it before forking, so a policy that
// cannot work fails the start instead of crash-looping children.
common::Status preflightSandbox(const ConfigSnapshot& snapshot, const std::string& config_path);

// Applies the policy to the calling (single-threaded) process and logs what is in force.
common::Result<sandbox::SandboxReport> enterSandbox(const ConfigSnapshot& snapshot,
                                                    const std::string& config_path);

// The user workers run as: [server] user, or "nobody" when started as root without one.
std::string effectiveWorkerUser(const common::config::ServerConfig& server);

}  // namespace scalws::worker
