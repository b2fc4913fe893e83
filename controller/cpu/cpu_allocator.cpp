#include "controller/cpu/cpu_allocator.h"

#include <algorithm>
#include <map>

namespace scalws::controller::cpu {

using common::CpuSet;
using common::Result;
using common::Status;
using common::StatusCode;

namespace {

// "0 by web (exclusive), 1 by a, b (shared)" for the CPUs that are taken.
std::string describeTaken(const std::vector<CpuUsage>& usage) {
  std::string out;
  for (const CpuUsage& u : usage) {
    if (!u.in_host || u.free()) continue;
    if (!out.empty()) out += "; ";
    out += std::to_string(u.cpu) + " by ";
    if (!u.exclusive.empty()) {
      out += u.exclusive + " (exclusive)";
      continue;
    }
    for (size_t i = 0; i < u.shared.size(); ++i) out += (i ? ", " : "") + u.shared[i];
    out += " (shared)";
  }
  return out.empty() ? "none" : out;
}

std::string orNone(const CpuSet& set) {
  return set.empty() ? "none" : set.toString();
}

}  // namespace

std::vector<CpuUsage> CpuAllocator::usage(std::span<const CpuAssignment> existing) const {
  std::map<uint32_t, CpuUsage> by_cpu;
  for (uint32_t cpu : host_.ids()) by_cpu[cpu].cpu = cpu;
  for (const CpuAssignment& a : existing) {
    CpuUsage& u = by_cpu[a.cpu];
    u.cpu = a.cpu;
    u.in_host = host_.contains(a.cpu);
    if (a.shared) {
      u.shared.push_back(a.instance);
    } else {
      // Two exclusive holders cannot be stored (the schema's trigger refuses them); if
      // they ever were, show the first rather than hide the CPU.
      if (u.exclusive.empty()) u.exclusive = a.instance;
    }
  }
  std::vector<CpuUsage> out;
  out.reserve(by_cpu.size());
  for (auto& [cpu, u] : by_cpu) {
    std::sort(u.shared.begin(), u.shared.end());
    out.push_back(std::move(u));
  }
  return out;
}

Result<CpuSet> CpuAllocator::allocate(uint32_t count, bool shared,
                                      std::span<const CpuAssignment> existing) const {
  if (count == 0) return common::invalidArgument("an instance needs at least 1 CPU");
  std::vector<CpuUsage> all = usage(existing);

  if (!shared) {
    CpuSet free;
    for (const CpuUsage& u : all) {
      if (u.in_host && u.free()) free.add(u.cpu);
    }
    if (free.size() < count) {
      return Status(StatusCode::kResourceExhausted,
                    std::to_string(count) + " exclusive CPU(s) wanted but only " +
                        std::to_string(free.size()) + " free (" + orNone(free) + ") of " +
                        std::to_string(host_.size()) + " (" + orNone(host_) +
                        "); taken: " + describeTaken(all) +
                        "; CPUs held by shared instances can be used with --shared-cpus");
    }
    std::vector<uint32_t> ids(free.ids().begin(), free.ids().begin() + count);
    return CpuSet(std::move(ids));
  }

  std::vector<const CpuUsage*> candidates;
  for (const CpuUsage& u : all) {
    if (u.in_host && u.exclusive.empty()) candidates.push_back(&u);
  }
  if (candidates.size() < count) {
    CpuSet usable;
    for (const CpuUsage* u : candidates) usable.add(u->cpu);
    return Status(
        StatusCode::kResourceExhausted,
        std::to_string(count) + " shared CPU(s) wanted but only " + std::to_string(usable.size()) +
            " of " + std::to_string(host_.size()) + " are not held exclusively (" + orNone(usable) +
            "); a shared instance never uses a CPU held exclusively; taken: " + describeTaken(all));
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const CpuUsage* a, const CpuUsage* b) {
    return a->shared.size() < b->shared.size();  // ties keep id order
  });
  CpuSet chosen;
  for (uint32_t i = 0; i < count; ++i) chosen.add(candidates[i]->cpu);
  return chosen;
}

}  // namespace scalws::controller::cpu
