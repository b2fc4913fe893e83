#include "controller/systemd_integration.h"

#include <systemd/sd-bus.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-login.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <memory>

#include "common/log.h"

namespace scalws::controller {
namespace {

constexpr uint64_t kBusTimeoutUs = 1'000'000;
constexpr const char* kSystemd = "org.freedesktop.systemd1";

struct BusDeleter {
  void operator()(sd_bus* bus) const { sd_bus_flush_close_unref(bus); }
};
struct MessageDeleter {
  void operator()(sd_bus_message* m) const { sd_bus_message_unref(m); }
};
using BusPtr = std::unique_ptr<sd_bus, BusDeleter>;
using MessagePtr = std::unique_ptr<sd_bus_message, MessageDeleter>;

}  // namespace

ShutdownMode shutdownModeFor(int signum, const std::optional<std::string>& job_type) {
  if (signum == SIGUSR2) return ShutdownMode::kLeaveInstances;
  if (signum != SIGTERM || !job_type) return ShutdownMode::kStopInstances;
  // A restart job first stops the unit, then starts it; its type stays "restart" (or one
  // of the conditional variants) while the stop half runs.
  const std::string& t = *job_type;
  if (t == "restart" || t == "try-restart" || t == "reload-or-restart" ||
      t == "reload-or-try-restart") {
    return ShutdownMode::kLeaveInstances;
  }
  return ShutdownMode::kStopInstances;
}

std::string_view shutdownModeName(ShutdownMode mode) {
  return mode == ShutdownMode::kStopInstances ? "stop the instances"
                                              : "leave the instances serving";
}

void notifySystemd(const std::string& state) {
  if (getenv("NOTIFY_SOCKET") == nullptr) return;
  int rc = sd_notify(0, state.c_str());
  if (rc < 0) LOG_WARN("sd_notify(%s): error %d", state.c_str(), -rc);
}

std::optional<std::string> systemdJobType() {
  if (getenv("INVOCATION_ID") == nullptr && getenv("NOTIFY_SOCKET") == nullptr) {
    return std::nullopt;
  }
  char* unit_raw = nullptr;
  if (sd_pid_get_unit(0, &unit_raw) < 0 || unit_raw == nullptr) return std::nullopt;
  std::string unit(unit_raw);
  free(unit_raw);

  sd_bus* raw_bus = nullptr;
  if (sd_bus_open_system(&raw_bus) < 0) return std::nullopt;
  BusPtr bus(raw_bus);
  sd_bus_set_method_call_timeout(bus.get(), kBusTimeoutUs);

  char* unit_path_raw = nullptr;
  if (sd_bus_path_encode("/org/freedesktop/systemd1/unit", unit.c_str(), &unit_path_raw) < 0) {
    return std::nullopt;
  }
  std::string unit_path(unit_path_raw);
  free(unit_path_raw);

  sd_bus_error error = SD_BUS_ERROR_NULL;
  sd_bus_message* raw_reply = nullptr;
  int rc = sd_bus_get_property(bus.get(), kSystemd, unit_path.c_str(),
                               "org.freedesktop.systemd1.Unit", "Job", &error, &raw_reply, "(uo)");
  MessagePtr reply(raw_reply);
  if (rc < 0) {
    LOG_WARN("systemd: cannot read the job of %s: %s", unit.c_str(),
             error.message != nullptr ? error.message : "no answer");
    sd_bus_error_free(&error);
    return std::nullopt;
  }
  uint32_t job_id = 0;
  const char* job_path = nullptr;
  if (sd_bus_message_read(reply.get(), "(uo)", &job_id, &job_path) < 0 || job_id == 0) {
    return std::nullopt;
  }
  char* type = nullptr;
  rc = sd_bus_get_property_string(bus.get(), kSystemd, job_path, "org.freedesktop.systemd1.Job",
                                  "JobType", &error, &type);
  sd_bus_error_free(&error);
  if (rc < 0 || type == nullptr) return std::nullopt;
  std::string out(type);
  free(type);
  return out;
}

}  // namespace scalws::controller
