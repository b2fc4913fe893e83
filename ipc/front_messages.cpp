#include "ipc/front_messages.h"

#include <climits>

namespace scalws::ipc {

using common::Result;
using common::Status;

namespace {

constexpr size_t kMaxFrontName = 253;
constexpr size_t kMaxFrontInstanceName = 256;

Status badFront(std::string_view where, const Status& why) {
  return common::invalidArgument(std::string(where) + ": " + why.message());
}

Result<uint64_t> boundedField(const Json& object, std::string_view key, uint64_t max) {
  Result<uint64_t> value = uintField(object, key);
  if (!value.ok()) return value.status();
  if (*value > max) {
    return common::invalidArgument("\"" + std::string(key) + "\" must be at most " +
                                   std::to_string(max));
  }
  return value;
}

Result<int64_t> frontPid(const Json& object) {
  Result<uint64_t> pid = boundedField(object, "pid", INT_MAX);
  if (!pid.ok()) return pid.status();
  if (*pid == 0) return common::invalidArgument("\"pid\" must not be 0");
  return static_cast<int64_t>(*pid);
}

Result<std::vector<int>> fdListField(const Json& object, std::string_view key) {
  auto it = object.find(key);
  if (it == object.end() || !it->is_array() || it->size() > kMaxFrontChannels * 4) {
    return common::invalidArgument("\"" + std::string(key) + "\" must be a list of fds");
  }
  std::vector<int> out;
  for (const Json& fd : *it) {
    if (!fd.is_number_unsigned() || fd.get<uint64_t>() > INT_MAX) {
      return common::invalidArgument("\"" + std::string(key) + "\" must be a list of fds");
    }
    out.push_back(static_cast<int>(fd.get<uint64_t>()));
  }
  return out;
}

Json frontSettingsJson(const FrontSettings& s) {
  return {{"address", s.address},
          {"port", s.port},
          {"tls", s.tls},
          {"slot", s.slot},
          {"header_timeout_ms", s.header_timeout_ms},
          {"max_waiting", s.max_waiting},
          {"user", s.user},
          {"quic", s.quic}};
}

Result<FrontSettings> frontSettingsFrom(const Json& args) {
  auto it = args.find("settings");
  if (it == args.end() || !it->is_object()) {
    return common::invalidArgument("\"settings\" must be an object");
  }
  const Json& j = *it;
  FrontSettings s;
  SCALWS_ASSIGN_OR_RETURN(s.address, stringField(j, "address"));
  if (s.address.empty()) return common::invalidArgument("\"address\" must not be empty");
  SCALWS_ASSIGN_OR_RETURN(uint64_t port, boundedField(j, "port", 65535));
  if (port == 0) return common::invalidArgument("\"port\" must be 1 to 65535");
  s.port = static_cast<uint16_t>(port);
  SCALWS_ASSIGN_OR_RETURN(s.tls, boolField(j, "tls"));
  SCALWS_ASSIGN_OR_RETURN(uint64_t slot, boundedField(j, "slot", 1024));
  s.slot = static_cast<uint32_t>(slot);
  SCALWS_ASSIGN_OR_RETURN(s.header_timeout_ms, boundedField(j, "header_timeout_ms", 3'600'000));
  if (s.header_timeout_ms == 0) {
    return common::invalidArgument("\"header_timeout_ms\" must not be 0");
  }
  SCALWS_ASSIGN_OR_RETURN(uint64_t waiting, boundedField(j, "max_waiting", 1'000'000));
  if (waiting == 0) return common::invalidArgument("\"max_waiting\" must not be 0");
  s.max_waiting = static_cast<uint32_t>(waiting);
  SCALWS_ASSIGN_OR_RETURN(s.user, stringField(j, "user"));
  if (s.user.empty()) return common::invalidArgument("\"user\" must not be empty");
  // Absent from a front started before shared addresses had HTTP/3.
  if (j.contains("quic")) {
    SCALWS_ASSIGN_OR_RETURN(s.quic, boolField(j, "quic"));
  }
  return s;
}

}  // namespace

// --- hello -------------------------------------------------------------------------------

Json FrontHelloArgs::encode() const {
  Json out = {{"pid", static_cast<uint64_t>(pid)},
              {"address", address},
              {"attach_address", attach_address},
              {"attached", attached.has_value()}};
  if (!attached) return out;
  out["state"] = attached->stopping ? "stopping" : "serving";
  out["settings"] = frontSettingsJson(attached->settings);
  out["listener_fd"] = static_cast<uint64_t>(attached->listener_fd < 0 ? 0 : attached->listener_fd);
  Json channels = Json::array();
  for (int fd : attached->channel_fds) channels.push_back(static_cast<uint64_t>(fd));
  out["channel_fds"] = std::move(channels);
  if (attached->udp_fd >= 0) out["udp_fd"] = static_cast<uint64_t>(attached->udp_fd);
  return out;
}

Result<FrontHelloArgs> FrontHelloArgs::decode(const Json& args) {
  FrontHelloArgs h;
  Result<int64_t> pid = frontPid(args);
  if (!pid.ok()) return badFront("front.hello", pid.status());
  h.pid = *pid;
  Result<std::string> address = stringField(args, "address");
  if (!address.ok()) return badFront("front.hello", address.status());
  h.address = std::move(address).value();
  Result<std::string> attach = stringField(args, "attach_address");
  if (!attach.ok()) return badFront("front.hello", attach.status());
  h.attach_address = std::move(attach).value();
  Result<bool> attached = boolField(args, "attached");
  if (!attached.ok()) return badFront("front.hello", attached.status());
  if (!*attached) return h;
  Attached a;
  Result<std::string> state = stringField(args, "state");
  if (!state.ok()) return badFront("front.hello", state.status());
  if (*state != "serving" && *state != "stopping") {
    return common::invalidArgument("front.hello: \"state\" must be \"serving\" or \"stopping\"");
  }
  a.stopping = *state == "stopping";
  Result<FrontSettings> settings = frontSettingsFrom(args);
  if (!settings.ok()) return badFront("front.hello", settings.status());
  a.settings = std::move(settings).value();
  Result<uint64_t> listener = boundedField(args, "listener_fd", INT_MAX);
  if (!listener.ok()) return badFront("front.hello", listener.status());
  a.listener_fd = static_cast<int>(*listener);
  Result<std::vector<int>> channels = fdListField(args, "channel_fds");
  if (!channels.ok()) return badFront("front.hello", channels.status());
  a.channel_fds = std::move(channels).value();
  if (args.contains("udp_fd")) {
    Result<uint64_t> udp = boundedField(args, "udp_fd", INT_MAX);
    if (!udp.ok()) return badFront("front.hello", udp.status());
    a.udp_fd = static_cast<int>(*udp);
  }
  h.attached = std::move(a);
  return h;
}

// --- config ------------------------------------------------------------------------------

Json FrontConfigArgs::encode() const {
  return {{"settings", frontSettingsJson(settings)}, {"controller_uid", controller_uid}};
}

Result<FrontConfigArgs> FrontConfigArgs::decode(const Json& args) {
  FrontConfigArgs c;
  Result<FrontSettings> settings = frontSettingsFrom(args);
  if (!settings.ok()) return badFront("front.config", settings.status());
  c.settings = std::move(settings).value();
  Result<uint64_t> uid = boundedField(args, "controller_uid", UINT32_MAX);
  if (!uid.ok()) return badFront("front.config", uid.status());
  c.controller_uid = *uid;
  return c;
}

// --- ready -------------------------------------------------------------------------------

Json FrontReadyArgs::encode() const {
  if (!ok) return {{"ok", false}, {"error", error}};
  return {{"ok", true}, {"pid", static_cast<uint64_t>(pid)}, {"sandbox", sandbox.encode()}};
}

Result<FrontReadyArgs> FrontReadyArgs::decode(const Json& args) {
  FrontReadyArgs r;
  Result<bool> ok = boolField(args, "ok");
  if (!ok.ok()) return badFront("front.ready", ok.status());
  r.ok = *ok;
  if (!r.ok) {
    Result<std::string> error = stringField(args, "error");
    r.error = error.ok() ? std::move(error).value() : "said it is not ready";
    return r;
  }
  Result<int64_t> pid = frontPid(args);
  if (!pid.ok()) return badFront("front.ready", pid.status());
  r.pid = *pid;
  auto sandbox = args.find("sandbox");
  if (sandbox == args.end()) return common::invalidArgument("front.ready: no \"sandbox\"");
  Result<SandboxSummary> summary = SandboxSummary::decode(*sandbox);
  if (!summary.ok()) return badFront("front.ready", summary.status());
  r.sandbox = std::move(summary).value();
  return r;
}

// --- route -------------------------------------------------------------------------------

Json FrontRouteArgs::encode() const {
  Json channel_list = Json::array();
  for (const FrontChannel& c : channels)
    channel_list.push_back({{"slot", c.slot}, {"loop", c.loop}});
  Json out = {{"instance", instance},
              {"names", names},
              {"default", is_default},
              {"channels", std::move(channel_list)}};
  if (more) out["more"] = true;
  return out;
}

Result<FrontRouteArgs> FrontRouteArgs::decode(const Json& args) {
  FrontRouteArgs r;
  Result<std::string> instance = stringField(args, "instance");
  if (!instance.ok()) return badFront("front.route", instance.status());
  if (instance->empty() || instance->size() > kMaxFrontInstanceName) {
    return common::invalidArgument("front.route: \"instance\" must be 1 to 256 bytes");
  }
  r.instance = std::move(instance).value();
  auto names = args.find("names");
  if (names == args.end() || !names->is_array() || names->size() > kMaxFrontNames) {
    return common::invalidArgument("front.route: \"names\" must be a list of names");
  }
  for (const Json& n : *names) {
    if (!n.is_string() || n.get<std::string>().empty() ||
        n.get<std::string>().size() > kMaxFrontName) {
      return common::invalidArgument("front.route: \"names\" must be a list of names");
    }
    r.names.push_back(n.get<std::string>());
  }
  Result<bool> is_default = boolField(args, "default");
  if (!is_default.ok()) return badFront("front.route", is_default.status());
  r.is_default = *is_default;
  auto channels = args.find("channels");
  if (channels == args.end() || !channels->is_array() || channels->size() > kMaxFdsPerFrame) {
    return common::invalidArgument("front.route: \"channels\" must be a list of channels");
  }
  for (const Json& c : *channels) {
    if (!c.is_object()) return common::invalidArgument("front.route: a channel is an object");
    Result<uint64_t> slot = boundedField(c, "slot", kMaxFrontChannels);
    Result<uint64_t> loop = boundedField(c, "loop", kMaxFrontChannels);
    if (!slot.ok()) return badFront("front.route", slot.status());
    if (!loop.ok()) return badFront("front.route", loop.status());
    r.channels.push_back({static_cast<uint32_t>(*slot), static_cast<uint32_t>(*loop)});
  }
  if (args.contains("more")) {
    Result<bool> more = boolField(args, "more");
    if (!more.ok()) return badFront("front.route", more.status());
    r.more = *more;
  }
  return r;
}

// --- metrics -----------------------------------------------------------------------------

FrontCounters& FrontCounters::operator+=(const FrontCounters& other) {
#define SCALWS_FRONT_ADD(name, help) name += other.name;
  SCALWS_FRONT_COUNTERS(SCALWS_FRONT_ADD)
#undef SCALWS_FRONT_ADD
  waiting += other.waiting;
  return *this;
}

Json FrontCounters::toJson() const {
  Json out = Json::object();
#define SCALWS_FRONT_JSON(name, help) out[#name] = name;
  SCALWS_FRONT_COUNTERS(SCALWS_FRONT_JSON)
#undef SCALWS_FRONT_JSON
  out["waiting"] = waiting;
  return out;
}

Json FrontMetricsArgs::encode() const {
  Json by_instance = Json::object();
  for (const auto& [name, n] : handoffs) by_instance[name] = n;
  return {{"pid", static_cast<uint64_t>(pid)},
          {"slot", slot},
          {"counters", counters.toJson()},
          {"handoffs", std::move(by_instance)}};
}

Result<FrontMetricsArgs> FrontMetricsArgs::decode(const Json& args) {
  FrontMetricsArgs m;
  Result<int64_t> pid = frontPid(args);
  if (!pid.ok()) return badFront("front.metrics", pid.status());
  m.pid = *pid;
  Result<uint64_t> slot = boundedField(args, "slot", 1024);
  if (!slot.ok()) return badFront("front.metrics", slot.status());
  m.slot = static_cast<uint32_t>(*slot);
  auto counters = args.find("counters");
  if (counters == args.end() || !counters->is_object()) {
    return common::invalidArgument("front.metrics: \"counters\" must be an object");
  }
  Status status;
  auto read = [&](const char* key, uint64_t& out) {
    // A front older than HTTP/3 on shared addresses has no QUIC figures: they are 0.
    if (std::string_view(key).starts_with("quic_") && !counters->contains(key)) {
      out = 0;
      return;
    }
    Result<uint64_t> v = uintField(*counters, key);
    if (!v.ok() && status.ok()) status = badFront("front.metrics", v.status());
    out = v.ok() ? *v : 0;
  };
#define SCALWS_FRONT_READ(name, help) read(#name, m.counters.name);
  SCALWS_FRONT_COUNTERS(SCALWS_FRONT_READ)
#undef SCALWS_FRONT_READ
  read("waiting", m.counters.waiting);
  if (!status.ok()) return status;
  auto handoffs = args.find("handoffs");
  if (handoffs == args.end() || !handoffs->is_object() || handoffs->size() > kMaxFrontChannels) {
    return common::invalidArgument("front.metrics: \"handoffs\" must be an object");
  }
  for (const auto& [name, n] : handoffs->items()) {
    if (!n.is_number_unsigned() || name.empty() || name.size() > kMaxFrontInstanceName) {
      return common::invalidArgument("front.metrics: \"handoffs\" must map names to counts");
    }
    m.handoffs.emplace_back(name, n.get<uint64_t>());
  }
  return m;
}

}  // namespace scalws::ipc
