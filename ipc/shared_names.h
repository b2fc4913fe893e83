// What a worker behind a front checks each request's host against: for every address it
// shares with other instances, the names this instance claims there, the names others
// claim, and where names nobody claims go. The worker answers 421 Misdirected Request when
// the front would have sent the request's host elsewhere (common/net/host_name_table.h
// decides for both). Sent with `listeners` and again with `shared_names` whenever an
// instance on the address starts, stops, reloads or changes its names.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

struct SharedAddressNames {
  enum class Fallback { kNone, kMine, kOther };  // who gets the names nobody claims
  std::string address;                           // as the [[listen]] writes it
  uint16_t port = 0;
  std::vector<std::string> mine;
  std::vector<std::string> others;
  Fallback fallback = Fallback::kNone;

  friend bool operator==(const SharedAddressNames&, const SharedAddressNames&) = default;
};

// {"shared": [...]} as `listeners` (beside its own fields) and `shared_names` carry it.
void sharedNamesInto(const std::vector<SharedAddressNames>& shared, Json& out);
// Absent "shared" is an empty list.
common::Result<std::vector<SharedAddressNames>> sharedNamesFrom(const Json& args);

}  // namespace scalws::ipc
