// ThrashWatch: tells when an app's memory cgroup is stuck at its limit re-reading its own
// code from disk instead of being ended by the OOM killer.
//
// At its limit, a cgroup first reclaims its page cache, and the pages of the runtime's
// code (node's 80 MiB, Python's libraries) count there when the app was the first to read
// them. The app's next instructions fault them back in, which evicts others: the kernel
// sees reclaim making progress, so it never calls the OOM killer, and the app spins in
// the kernel at 100 % CPU, answering nothing, for as long as it takes (minutes, seen on a
// machine whose page cache was cold). systemd-oomd exists for the same reason.
//
// Thrashing, for one look (AppManager looks once a second): usage within 1/16 of the
// limit, pages read back soon after their eviction (workingset refaults) worth at least a
// quarter of the limit since the last look, and major page faults (code and mapped files:
// an app that only streams a large file through read() has none). kThrashLooks looks in a
// row and the app is ended, as the OOM killer would have done.
#pragma once

#include <cstdint>
#include <string>

#include "controller/apps/app_cgroup.h"

namespace scalws::controller {

inline constexpr int kThrashLooks = 10;
inline constexpr uint64_t kThrashMajorFaultsPerLook = 8;

class ThrashWatch {
 public:
  explicit ThrashWatch(uint64_t page_bytes);

  // Feeds one look at the cgroup; true when it has thrashed kThrashLooks looks in a row.
  bool thrashing(const CgroupUsage& now);
  // Forgets the past (a new process in the cgroup).
  void reset();
  // The bytes read back per look, averaged over the looks in a row so far.
  uint64_t refaultedBytesPerLook() const;

 private:
  uint64_t page_bytes_;
  bool have_last_ = false;
  CgroupUsage last_;
  int looks_in_a_row_ = 0;
  uint64_t refaulted_in_a_row_ = 0;  // bytes
};

}  // namespace scalws::controller
