#include "worker/server/worker_sandbox.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <variant>

#include "common/config/host_resolver.h"
#include "common/log.h"
#include "sandbox/landlock.h"
#include "sandbox/sandbox.h"

namespace scalws::worker {

using common::Result;
using common::config::SandboxMode;
using common::config::SeccompAction;

namespace {

constexpr const char* kDefaultUserForRoot = "nobody";

// The directory holding `file`, or the file itself when that would be "/".
std::string parentDirectory(const std::string& file) {
  size_t slash = file.rfind('/');
  return slash == std::string::npos || slash == 0 ? file : file.substr(0, slash);
}

sandbox::SandboxMode toSandboxMode(SandboxMode mode) {
  switch (mode) {
    case SandboxMode::kOff:
      return sandbox::SandboxMode::kOff;
    case SandboxMode::kOn:
      return sandbox::SandboxMode::kOn;
    case SandboxMode::kRequired:
      return sandbox::SandboxMode::kRequired;
  }
  return sandbox::SandboxMode::kOn;
}

}  // namespace

std::string effectiveWorkerUser(const common::config::ServerConfig& server) {
  if (server.user.empty() && geteuid() == 0) return kDefaultUserForRoot;
  return server.user;
}

Result<sandbox::SandboxPolicy> sandboxPolicyFor(const ConfigSnapshot& snapshot,
                                                const std::string& config_path) {
  const auto& server = snapshot.server();
  sandbox::SandboxInputs in;
  in.mode = toSandboxMode(server.sandbox);
  in.seccompAction = server.seccomp_action == SeccompAction::kKill ? sandbox::SeccompAction::kKill
                                                                   : sandbox::SeccompAction::kErrno;
  in.user = effectiveWorkerUser(server);
  in.allowRoot = in.user == "root";
  bool php = false;
  for (const auto& route : snapshot.site().routes) {
    if (const auto* st = std::get_if<common::config::StaticAction>(&route.action)) {
      in.docroots.push_back(st->root);
    }
    // The worker checks that a script exists beneath its root (it never reads it: PHP does).
    if (const auto* action = std::get_if<common::config::PhpAction>(&route.action)) {
      in.docroots.push_back(action->root);
      php = true;
    }
    if (route.response.errors) {
      for (const auto& page : route.response.errors->pages) in.docroots.push_back(page.root);
    }
    // A reload reads the users files again, from inside the sandbox: their directories
    // stay readable (as a certificate's do).
    if (route.auth) in.extraReadPaths.push_back(parentDirectory(route.auth->users));
  }
  // Error pages are read beneath their roots, like static files.
  if (const auto& errors = snapshot.site().response.errors) {
    for (const auto& page : errors->pages) in.docroots.push_back(page.root);
  }
  // Request bodies of unknown length wait there for PHP (fastcgi/body_spool.h).
  if (php) in.writableDirs.push_back(server.temp_dir);
  for (const auto& pool : snapshot.site().php_pools) {
    if (pool.kind == common::config::PhpPoolConfig::Kind::kTcp) {
      in.tcpConnectPorts.push_back(pool.port);
    } else {
      in.unixConnect = true;
    }
  }
  for (const auto& listen : snapshot.site().listens) in.udpDatagrams |= listen.http3;
  // The proxy connects to its upstreams' ports and nowhere else (health probes included).
  for (const auto& upstream : snapshot.site().upstreams) {
    for (const auto& upstream_server : upstream.servers) {
      if (upstream_server.kind == common::config::UpstreamServerConfig::Kind::kTcp) {
        in.tcpConnectPorts.push_back(upstream_server.port);
      } else {
        in.unixConnect = true;
      }
    }
  }
  // A cache's disk tier is the only place a worker writes files to.
  for (const auto& cache : snapshot.site().caches) {
    if (!cache.disk.empty()) in.writableDirs.push_back(cache.disk);
  }
  // The log files themselves, not their directories: a rule on a file holds its inode, so
  // a sandboxed process can reopen a log only while the same file is under its name (single
  // mode rotates with logrotate's copytruncate); a rule on the directory would let an
  // attacker's code write to every file beside the log the worker's user may write.
  for (const std::string* log : {&server.access_log, &server.error_log}) {
    if (!log->empty()) in.logFiles.push_back(*log);
  }
  // A reload in single mode re-reads the config from inside the sandbox, and with it the
  // TLS certificates, keys and OCSP files: their directories stay readable (renewals
  // usually replace the files, or the symlinks to them).
  for (const auto& listen : snapshot.site().listens) {
    if (!listen.tls) continue;
    for (const auto& cert : listen.tls->allCertificates()) {
      for (const std::string* file : {&cert.cert, &cert.key, &cert.ocsp}) {
        if (!file->empty()) in.extraReadPaths.push_back(parentDirectory(*file));
      }
    }
    if (!listen.tls->ticket_key_file.empty()) {
      in.extraReadPaths.push_back(parentDirectory(listen.tls->ticket_key_file));
    }
  }
  if (!config_path.empty()) {
    char resolved[PATH_MAX];
    if (realpath(config_path.c_str(), resolved) != nullptr) in.extraReadPaths.push_back(resolved);
  }
  return sandbox::buildSandboxPolicy(in);
}

common::Status preflightSandbox(const ConfigSnapshot& snapshot, const std::string& config_path) {
  Result<sandbox::SandboxPolicy> policy = sandboxPolicyFor(snapshot, config_path);
  if (!policy.ok()) return policy.status();
  if (policy->mode == sandbox::SandboxMode::kOff) return common::okStatus();
  Result<sandbox::LandlockPlan> plan = sandbox::planLandlock(*policy, sandbox::probeLandlockAbi());
  if (!plan.ok()) return plan.status();
  return common::okStatus();
}

Result<sandbox::SandboxReport> enterSandbox(const ConfigSnapshot& snapshot,
                                            const std::string& config_path) {
  Result<sandbox::SandboxPolicy> policy = sandboxPolicyFor(snapshot, config_path);
  if (!policy.ok()) return policy.status();
  Result<sandbox::SandboxReport> report = sandbox::applySandbox(*policy);
  if (!report.ok()) return report.status();
  // DNS is out of reach from here on: a reload resolves upstream names from what was
  // resolved before (host_resolver.h).
  if (policy->mode != sandbox::SandboxMode::kOff) common::config::sealProcessResolver();
  const auto& r = *report;
  LOG_INFO("sandbox: uid %u gid %u, landlock abi %d%s, seccomp %s (%zu syscalls)%s",
           static_cast<unsigned>(getuid()), static_cast<unsigned>(getgid()), r.landlock.abi,
           r.landlock.enforced ? "" : " (not enforced)", r.seccomp.enforced ? "on" : "off",
           r.seccomp.allowedSyscalls, r.degraded.empty() ? "" : "; degraded:");
  for (const std::string& d : r.degraded) LOG_WARN("sandbox degraded: %s", d.c_str());
  return report;
}

}  // namespace scalws::worker
