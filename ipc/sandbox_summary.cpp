#include "ipc/sandbox_summary.h"

namespace scalws::ipc {

using common::Result;
using common::Status;

namespace {

using S = SandboxSummary;

// One decoder per JSON type, each naming the field that failed as "a.b".
class Reader {
 public:
  explicit Reader(const Json& root) : root_(root) {}

  const Json* at(const char* object, const char* key) {
    const Json& o = object == nullptr ? root_ : member(root_, object, nullptr);
    return error_.ok() ? &member(o, key, object) : nullptr;
  }
  void text(const char* object, const char* key, std::string& out) {
    const Json* v = at(object, key);
    if (v == nullptr) return;
    if (!v->is_string() || v->get_ref<const std::string&>().size() > S::kMaxText) {
      return fail(object, key, "a string of at most 4096 bytes");
    }
    out = v->get<std::string>();
  }
  void flag(const char* object, const char* key, bool& out) {
    const Json* v = at(object, key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return fail(object, key, "true or false");
    out = v->get<bool>();
  }
  void number(const char* object, const char* key, uint64_t& out) {
    const Json* v = at(object, key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned()) return fail(object, key, "a non-negative integer");
    out = v->get<uint64_t>();
  }
  // A list of T read by `one`, which returns false on a bad entry.
  template <typename T, typename F>
  void list(const char* object, const char* key, std::vector<T>& out, const char* what, F one) {
    const Json* v = at(object, key);
    if (v == nullptr) return;
    if (!v->is_array() || v->size() > S::kMaxItems) return fail(object, key, "a list");
    for (const Json& item : *v) {
      T value{};
      if (!one(item, value)) return fail(object, key, what);
      out.push_back(std::move(value));
    }
  }
  const Status& error() const { return error_; }

 private:
  const Json& member(const Json& o, const char* key, const char* parent) {
    static const Json kNull;
    if (!error_.ok()) return kNull;
    auto it = o.is_object() ? o.find(key) : o.end();
    if (it == o.end()) {
      fail(parent, key, "present");
      return kNull;
    }
    return *it;
  }
  void fail(const char* object, const char* key, const char* what) {
    if (!error_.ok()) return;
    std::string name = object == nullptr ? key : std::string(object) + "." + key;
    error_ = common::invalidArgument("sandbox report: \"" + name + "\" must be " + what);
  }

  const Json& root_;
  Status error_;
};

bool oneText(const Json& v, std::string& out) {
  if (!v.is_string() || v.get_ref<const std::string&>().size() > S::kMaxText) return false;
  out = v.get<std::string>();
  return true;
}

bool oneNumber(const Json& v, uint64_t& out) {
  if (!v.is_number_unsigned()) return false;
  out = v.get<uint64_t>();
  return true;
}

bool onePort(const Json& v, uint64_t& out) {
  return oneNumber(v, out) && out >= 1 && out <= 65535;
}

bool onePath(const Json& v, S::Path& out) {
  auto path = v.is_object() ? v.find("path") : v.end();
  auto access = v.is_object() ? v.find("access") : v.end();
  return path != v.end() && access != v.end() && oneText(*path, out.path) &&
         oneText(*access, out.access);
}

}  // namespace

Json SandboxSummary::encode() const {
  Json paths = Json::array();
  for (const Path& p : landlock_paths) paths.push_back({{"path", p.path}, {"access", p.access}});
  return {{"mode", mode},
          {"identity",
           {{"changed", identity_changed},
            {"user", user},
            {"uid", uid},
            {"gid", gid},
            {"groups", groups}}},
          {"no_new_privs", no_new_privs},
          {"landlock",
           {{"abi", landlock_abi},
            {"enforced", landlock_enforced},
            {"paths", paths},
            {"tcp_connect_ports", tcp_connect_ports},
            {"scoped", landlock_scoped}}},
          {"seccomp",
           {{"enforced", seccomp_enforced},
            {"action", seccomp_action},
            {"allowed_syscalls", allowed_syscalls},
            {"udp_datagrams", udp_datagrams},
            {"profile", seccomp_profile}}},
          {"degraded", degraded},
          {"verified", verified}};
}

Result<SandboxSummary> SandboxSummary::decode(const Json& j) {
  if (!j.is_object()) return common::invalidArgument("sandbox report: not an object");
  SandboxSummary s;
  Reader r(j);
  r.text(nullptr, "mode", s.mode);
  r.flag("identity", "changed", s.identity_changed);
  r.text("identity", "user", s.user);
  r.number("identity", "uid", s.uid);
  r.number("identity", "gid", s.gid);
  r.list("identity", "groups", s.groups, "a list of gids", oneNumber);
  r.flag(nullptr, "no_new_privs", s.no_new_privs);
  r.number("landlock", "abi", s.landlock_abi);
  r.flag("landlock", "enforced", s.landlock_enforced);
  r.list("landlock", "paths", s.landlock_paths, "a list of {path, access}", onePath);
  r.list("landlock", "tcp_connect_ports", s.tcp_connect_ports, "a list of ports", onePort);
  r.list("landlock", "scoped", s.landlock_scoped, "a list of strings", oneText);
  r.flag("seccomp", "enforced", s.seccomp_enforced);
  r.text("seccomp", "action", s.seccomp_action);
  r.number("seccomp", "allowed_syscalls", s.allowed_syscalls);
  // Absent from a worker without HTTP/3: no UDP.
  auto sc = j.find("seccomp");
  if (sc != j.end() && sc->is_object() && sc->contains("udp_datagrams")) {
    r.flag("seccomp", "udp_datagrams", s.udp_datagrams);
  }
  // Absent from a worker built before fronts existed: a worker's list.
  if (sc != j.end() && sc->is_object() && sc->contains("profile")) {
    r.text("seccomp", "profile", s.seccomp_profile);
    if (s.seccomp_profile != "worker" && s.seccomp_profile != "front") {
      return common::invalidArgument("sandbox report: \"seccomp.profile\" must be worker or front");
    }
  }
  r.list(nullptr, "degraded", s.degraded, "a list of strings", oneText);
  r.flag(nullptr, "verified", s.verified);
  if (!r.error().ok()) return r.error();
  return s;
}

}  // namespace scalws::ipc
