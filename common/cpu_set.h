// CpuSet: a set of CPU ids, and the Linux "cpulist" text form ("0,2-3") operators type
// for `--reserve-cpus`, read in /sys/devices/system/cpu/online and expect in `cpu list`.
//
// A plain value (sorted, unique ids); cheap to copy for the handful of CPUs a host has.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace scalws::common {

class CpuSet {
 public:
  // Linux's largest NR_CPUS; ids at or past it are refused by the parser.
  static constexpr uint32_t kMaxCpus = 8192;

  CpuSet() = default;
  CpuSet(std::initializer_list<uint32_t> ids);
  explicit CpuSet(std::vector<uint32_t> ids);  // any order, duplicates dropped

  // CPUs first..last inclusive (empty when last < first).
  static CpuSet range(uint32_t first, uint32_t last);

  bool contains(uint32_t cpu) const;
  void add(uint32_t cpu);
  void remove(uint32_t cpu);
  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const std::vector<uint32_t>& ids() const { return ids_; }  // ascending

  CpuSet minus(const CpuSet& other) const;
  bool isSubsetOf(const CpuSet& other) const;

  // The cpulist form, ranges collapsed: {0,2,3,4} -> "0,2-4"; the empty set -> "".
  std::string toString() const;

  friend bool operator==(const CpuSet&, const CpuSet&) = default;

 private:
  std::vector<uint32_t> ids_;
};

// Parses a cpulist: comma-separated ids and inclusive ranges ("0,2-3"). Blanks around the
// whole text and around items are allowed (sysfs files end in '\n'); "" is the empty set.
// Overlapping items are merged. Refused (kInvalidArgument, naming the bad item): empty
// items ("1,,2"), reversed ranges ("3-1"), strides ("0-7:2"), signs, ids >= kMaxCpus.
Result<CpuSet> parseCpuList(std::string_view text);

// The calling thread's CPU affinity (sched_getaffinity), i.e. the CPUs it may run on.
// Under systemd this already reflects CPUAffinity= and cgroup cpusets.
Result<CpuSet> currentAffinity();

}  // namespace scalws::common
