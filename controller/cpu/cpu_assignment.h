// CpuAssignment: one CPU given to one instance, as stored in `cpu_assignments`.
#pragma once

#include <cstdint>
#include <string>

namespace scalws::controller::cpu {

struct CpuAssignment {
  std::string instance;
  uint32_t cpu = 0;
  // false: the instance holds the CPU alone; true: it may share it with other shared
  // instances (never with an exclusive holder, see cpu_allocator.h).
  bool shared = false;

  friend bool operator==(const CpuAssignment&, const CpuAssignment&) = default;
};

}  // namespace scalws::controller::cpu
