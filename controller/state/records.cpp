#include "controller/state/records.h"

#include <algorithm>
#include <charconv>

namespace scalws::controller::state {

using common::Result;
using common::Status;

std::string_view desiredStateName(DesiredState state) {
  return state == DesiredState::kRunning ? "running" : "stopped";
}

Result<DesiredState> parseDesiredState(std::string_view name) {
  if (name == "running") return DesiredState::kRunning;
  if (name == "stopped") return DesiredState::kStopped;
  return common::invalidArgument("desired state must be running or stopped, not '" +
                                 std::string(name) + "'");
}

Status validateName(std::string_view what, std::string_view name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  bool ok = !name.empty() && name.size() <= 64 && alnum(name.front()) &&
            std::all_of(name.begin(), name.end(),
                        [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
  if (ok) return Status();
  return common::invalidArgument(
      "bad " + std::string(what) + " name '" + std::string(name) +
      "': use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit");
}

namespace {

Status validateAddress(const PoolRecord& pool) {
  std::string_view address = pool.address;
  auto bad = [&](std::string_view why) {
    return common::invalidArgument("pool " + pool.name + ": bad address '" + pool.address +
                                   "': " + std::string(why));
  };
  if (address.starts_with("unix:")) {
    if (address.size() < 6 || address[5] != '/') return bad("a unix socket path is absolute");
    return Status();
  }
  if (!address.starts_with("tcp:")) return bad("use unix:/path or tcp:host:port");
  std::string_view host_port = address.substr(4);
  size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos || colon == 0) return bad("use tcp:host:port");
  std::string_view port = host_port.substr(colon + 1);
  uint32_t value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value == 0 ||
      value > 65535) {
    return bad("the port is a number from 1 to 65535");
  }
  return Status();
}

}  // namespace

Status validatePool(const PoolRecord& pool) {
  SCALWS_RETURN_IF_ERROR(validateName("pool", pool.name));
  SCALWS_RETURN_IF_ERROR(validateAddress(pool));
  if (pool.managed) {
    if (pool.managed_user.empty()) {
      return common::invalidArgument("pool " + pool.name + ": a managed pool needs a user");
    }
    if (pool.processes == 0) {
      return common::invalidArgument("pool " + pool.name +
                                     ": a managed pool needs at least 1 process");
    }
  } else if (!pool.managed_user.empty() || pool.processes != 0 || !pool.php_fpm_path.empty()) {
    return common::invalidArgument("pool " + pool.name +
                                   ": user, processes and php-fpm path are for managed pools");
  }
  if (pool.instance) SCALWS_RETURN_IF_ERROR(validateName("instance", *pool.instance));
  if (!pool.assigned_as.empty()) SCALWS_RETURN_IF_ERROR(validateName("pool", pool.assigned_as));
  return Status();
}

}  // namespace scalws::controller::state
