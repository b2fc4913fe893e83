// CpuAllocator: which CPUs a new instance gets. Pure logic: it is given
// the host's CPUs once and the current assignments on every call, touches no OS state,
// and is called by the state store inside the transaction that stores its answer.
//
// Policy ("exclusive means exclusive", as nginx and Unit users expect of pinning):
//   - An exclusive request gets CPUs no other instance holds at all, neither exclusively
//     nor shared; the lowest free ids are taken. Not enough → kResourceExhausted naming
//     the free CPUs and who holds the others.
//   - A shared request gets the least-loaded CPUs among those nobody holds exclusively
//     (load = number of shared holders; ties → lowest id), so free CPUs are taken first.
//     A shared instance never runs on a CPU another instance holds exclusively.
//   - Assignments on CPUs outside the host set (the affinity changed since they were
//     stored) are ignored for choosing and reported by usage().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "common/cpu_set.h"
#include "common/status.h"
#include "controller/cpu/cpu_assignment.h"

namespace scalws::controller::cpu {

// Who holds one CPU, for `cpu list` and `instance show`.
struct CpuUsage {
  uint32_t cpu = 0;
  bool in_host = true;              // false: assigned, but not among the host's CPUs now
  std::string exclusive;            // the exclusive holder, or ""
  std::vector<std::string> shared;  // shared holders, sorted by name

  bool free() const { return exclusive.empty() && shared.empty(); }
};

class CpuAllocator {
 public:
  explicit CpuAllocator(common::CpuSet host) : host_(std::move(host)) {}

  const common::CpuSet& host() const { return host_; }

  // Chooses `count` CPUs for an instance that holds none yet (`existing` must not list
  // the instance itself). count == 0 → kInvalidArgument.
  common::Result<common::CpuSet> allocate(uint32_t count, bool shared,
                                          std::span<const CpuAssignment> existing) const;

  // One entry per host CPU plus one per assigned CPU outside the host, ascending.
  std::vector<CpuUsage> usage(std::span<const CpuAssignment> existing) const;

 private:
  common::CpuSet host_;
};

}  // namespace scalws::controller::cpu
