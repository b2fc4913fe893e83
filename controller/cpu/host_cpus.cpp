#include "controller/cpu/host_cpus.h"

#include <string>

namespace scalws::controller::cpu {

using common::CpuSet;
using common::Result;

Result<CpuSet> hostCpus(const CpuSet& affinity, const CpuSet& reserved) {
  CpuSet outside = reserved.minus(affinity);
  if (!outside.empty()) {
    return common::invalidArgument("--reserve-cpus names CPU(s) " + outside.toString() +
                                   " that the controller may not use anyway (its CPUs are " +
                                   affinity.toString() + ")");
  }
  CpuSet host = affinity.minus(reserved);
  if (host.empty()) {
    return common::invalidArgument("--reserve-cpus " + reserved.toString() +
                                   " leaves no CPU for instances (the controller's CPUs are " +
                                   affinity.toString() + ")");
  }
  return host;
}

Result<CpuSet> hostCpusFromOptions(std::string_view reserve_list) {
  Result<CpuSet> reserved = common::parseCpuList(reserve_list);
  if (!reserved.ok()) {
    return common::invalidArgument("--reserve-cpus: " + reserved.status().message());
  }
  Result<CpuSet> affinity = common::currentAffinity();
  if (!affinity.ok()) return affinity.status();
  return hostCpus(*affinity, *reserved);
}

}  // namespace scalws::controller::cpu
