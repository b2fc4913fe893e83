// The CPUs the controller hands out: its own affinity minus `--reserve-cpus`.
#pragma once

#include <string_view>

#include "common/cpu_set.h"
#include "common/status.h"

namespace scalws::controller::cpu {

// affinity minus reserved. Refused (kInvalidArgument) when a reserved CPU is not in the
// affinity (a typo would otherwise reserve nothing, silently) or when nothing would be left.
common::Result<common::CpuSet> hostCpus(const common::CpuSet& affinity,
                                        const common::CpuSet& reserved);

// hostCpus(common::currentAffinity(), parseCpuList(reserve_list)), with the option named
// in parse errors. For the controller's start-up.
common::Result<common::CpuSet> hostCpusFromOptions(std::string_view reserve_list);

}  // namespace scalws::controller::cpu
