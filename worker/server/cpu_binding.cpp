#include "worker/server/cpu_binding.h"

#include <sched.h>

#include <cerrno>
#include <string>

namespace scalws::worker {

std::vector<uint32_t> cpusForMultiWorker(std::span<const uint32_t> cpus, uint32_t index) {
  if (cpus.empty()) return {};
  return {cpus[index % cpus.size()]};
}

common::Status bindCallingThread(std::span<const uint32_t> cpus) {
  if (cpus.empty()) return common::okStatus();
  cpu_set_t set;
  CPU_ZERO(&set);
  std::string names;
  for (uint32_t cpu : cpus) {
    if (!names.empty()) names += ",";
    names += std::to_string(cpu);
    if (cpu >= CPU_SETSIZE) {
      return common::Status(common::StatusCode::kInvalidArgument,
                            "CPU " + std::to_string(cpu) + " is past what the kernel can bind");
    }
    CPU_SET(cpu, &set);
  }
  // 0: the calling thread; threads it starts later inherit the set.
  if (::sched_setaffinity(0, sizeof(set), &set) != 0) {
    return common::errnoStatus(errno, "binding to CPUs " + names);
  }
  return common::okStatus();
}

}  // namespace scalws::worker
