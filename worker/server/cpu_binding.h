// Binding a worker's threads to the CPUs its config lists (`[server] cpus`).
//
// The sandbox refuses sched_setaffinity, so a worker that runs an attacker's code cannot
// move itself onto CPUs it was not given. Binding therefore happens before the sandbox, on
// the thread that goes on to start the loop threads: a new thread inherits its creator's
// CPU set.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace scalws::worker {

// The CPUs a worker process is bound to: in multi mode worker `index` gets one CPU of the
// list (round robin), in single mode the process gets all of them and its loops share them.
std::vector<uint32_t> cpusForMultiWorker(std::span<const uint32_t> cpus, uint32_t index);

// Binds the calling thread, and the threads it starts from now on, to `cpus` (empty: no
// change). Fails with the CPUs named when the kernel refuses (a CPU that does not exist, or
// outside the cgroup's cpuset).
common::Status bindCallingThread(std::span<const uint32_t> cpus);

}  // namespace scalws::worker
