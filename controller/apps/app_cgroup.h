// AppCgroups: the memory cgroups of apps (`app add --memory`): one cgroup per app process
// (a node process, or a gunicorn/uvicorn master with all its workers), made before the
// process starts, removed with the app.
//
// Where: beneath the controller's own cgroup, in a subtree of ours, SUBTREE/APP/INDEX
// (SUBTREE names this controller's state directory, so two controllers sharing a cgroup
// never share an app's). Which hierarchy, in this order:
//   cgroup v2, when the controller's cgroup is delegated to it (writable, and its parent
//     gives it the memory controller). The no-internal-processes rule allows a cgroup that
//     hands controllers to children no processes of its own, so the controller's cgroup B
//     keeps none: the controller runs in B/supervisor, with its workers and every other
//     process that was in B (moved there by setUp() when it was started elsewhere than
//     supervisor/, e.g. from a shell). Under systemd the unit's Delegate=yes and
//     DelegateSubgroup=supervisor (systemd 254) start it there; a service's own cgroup
//     (NAME.service: older systemd ignores DelegateSubgroup) is refused, since systemd
//     could not start the next controller into a cgroup with controllers enabled.
//     A limit is memory.max with memory.swap.max 0 and memory.oom.group 1: the OOM killer
//     ends the whole process group.
//   cgroup v1, when the memory hierarchy holds a cgroup of ours the controller can write
//     (hybrid hosts): memory.limit_in_bytes, and memory.memsw.limit_in_bytes the same (no
//     swap; memory.swappiness 0 where swap is not accounted). v1 has no oom.group: the
//     OOM killer ends one process, and AppProcess ends the rest when it sees the count
//     rise.
//   else none, and problem() says what is missing in each.
//
// The child joins its cgroup between fork and exec: it writes "0" (itself) to the
// cgroup.procs the parent opened for it. A controller that adopts a running app keeps its
// cgroup as it is.
//
// Paths: every path read or written is `root` + the path the kernel names, so tests run
// the logic against a tree in a temporary directory.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>

#include "common/status.h"

namespace scalws::controller {

// What the probe reads about the process and the host.
struct CgroupHost {
  std::string root;         // "" on a host; a directory standing for "/" in tests
  std::string self_cgroup;  // the text of /proc/self/cgroup
  std::string mountinfo;    // the text of /proc/self/mountinfo

  static CgroupHost current();
};

// One cgroup's figures; absent ones are 0 (limit 0: none).
struct CgroupUsage {
  uint64_t current_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t limit_bytes = 0;
  uint64_t oom_kills = 0;
  // From memory.stat (both versions): pages read back soon after they were evicted (the
  // working set does not fit), and page faults that had to read from disk.
  uint64_t refaulted_pages = 0;
  uint64_t major_faults = 0;
};

class AppCgroups {
 public:
  enum class Version { kNone, kV1, kV2 };

  static constexpr const char* kSupervisorLeaf = "supervisor";

  // Finds where app cgroups can go (nothing is written). `subtree` is the directory of
  // ours beneath the controller's cgroup.
  static AppCgroups probe(const CgroupHost& host, std::string subtree);

  Version version() const { return version_; }
  bool usable() const { return version_ != Version::kNone; }
  // Why no memory cgroup can be used ("" when one can), naming what is missing.
  const std::string& problem() const { return problem_; }
  // "cgroup v2 /sys/fs/cgroup/system.slice/x.service" or "cgroup v1 memory ...".
  std::string describe() const;

  // Makes the subtree (v2: moves the processes of the controller's cgroup into its
  // supervisor/ leaf first, then enables the memory controller below). Idempotent.
  common::Status setUp();
  // The directory of app `app`'s process `index` (as the kernel names it, with root).
  std::string pathOf(const std::string& app, uint32_t index) const;
  // Makes that cgroup (keeping one that is there) and writes its limit.
  common::Status prepare(const std::string& app, uint32_t index, uint64_t limit_bytes);
  // The file a process writes "0" to, to join the cgroup at `path`.
  static std::string procsFile(const std::string& path) { return path + "/cgroup.procs"; }
  // Removes every cgroup of `app`; an error names one that could not go (processes left).
  // The subtree goes with its last app.
  common::Status remove(const std::string& app);

  std::optional<CgroupUsage> usage(const std::string& path) const;
  // True when /proc/PID/cgroup puts `pid` in the cgroup at `path`.
  bool contains(const std::string& path, pid_t pid) const;

 private:
  common::Status setUpV2();
  std::string appDir(const std::string& app) const;

  Version version_ = Version::kNone;
  std::string problem_;
  std::string root_;
  std::string mount_;       // the hierarchy's mount point, with root_
  std::string mount_root_;  // the hierarchy's directory mounted there ("" for its root)
  std::string base_;        // the cgroup our subtree goes in, relative to the mount
  std::string subtree_;
  bool move_to_leaf_ = false;  // v2: setUp() empties base_ into base_/supervisor
  bool set_up_ = false;
};

}  // namespace scalws::controller
