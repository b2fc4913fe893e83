// TLS session-ticket secrets for the instances. An instance's workers are separate
// processes (spawned, restarted, re-attached by later controllers), yet a ticket one of them
// sealed must open in every other: the controller keeps one host secret in the state
// directory (`tls-ticket.secret`, 32 random bytes, mode 0600, made on first start) and gives
// each instance HMAC-SHA256(host secret, instance name). Instances never see the host
// secret, so a worker of one tenant cannot compute another tenant's ticket keys.
#pragma once

#include <string>

#include "common/status.h"

namespace scalws::controller {

// Reads `<state_dir>/tls-ticket.secret`, creating it when missing. Refuses a file that is
// shorter than 32 bytes or readable by others than its owner.
common::Result<std::string> loadOrCreateHostTicketSecret(const std::string& state_dir);

// 32 bytes, stable for a given host secret and instance name.
std::string instanceTicketSecret(const std::string& host_secret, const std::string& instance);

}  // namespace scalws::controller
