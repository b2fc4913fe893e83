// The digest of what a worker was told to be (its WorkerSettings: instance, slot, mode,
// loops, CPUs, user, config text, config path and PHP pools), kept in its `workers` row.
// A re-attaching controller compares it with the digest of what the worker says it runs
// and of what the DB says it was told: the three must agree, or the worker is replaced.
#pragma once

#include <string>

#include "ipc/worker_messages.h"

namespace scalws::controller {

// SHA-256 of the settings' JSON (keys in a fixed order), in lowercase hex.
std::string launchDigest(const ipc::WorkerSettings& settings);

}  // namespace scalws::controller
