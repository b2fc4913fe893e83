#include "ipc/app_grants.h"

#include <sys/un.h>

#include <set>

namespace scalws::ipc {

using common::Result;

namespace {

constexpr size_t kMaxApps = 256;
constexpr size_t kMaxSockets = 256;

common::Status bad(const std::string& message) {
  return common::invalidArgument("apps: " + message);
}

}  // namespace

Json appGrantsJson(const std::vector<AppGrant>& grants) {
  Json list = Json::array();
  for (const AppGrant& g : grants) list.push_back({{"name", g.name}, {"sockets", g.sockets}});
  return list;
}

void putAppGrants(const std::vector<AppGrant>& grants, Json& out) {
  if (!grants.empty()) out["apps"] = appGrantsJson(grants);
}

Result<std::vector<AppGrant>> parseAppGrants(const Json& args) {
  std::vector<AppGrant> out;
  auto it = args.find("apps");
  if (it == args.end()) return out;
  if (!it->is_array() || it->size() > kMaxApps) {
    return common::invalidArgument("\"apps\" must be an array of at most " +
                                   std::to_string(kMaxApps) + " apps");
  }
  std::set<std::string> names;
  for (const Json& entry : *it) {
    Result<std::string> name = stringField(entry, "name");
    if (!name.ok()) return bad(name.status().message());
    if (name->empty()) return bad("a name must not be empty");
    if (!names.insert(*name).second) return bad("app " + *name + " given twice");
    auto sockets = entry.is_object() ? entry.find("sockets") : entry.end();
    if (!entry.is_object() || sockets == entry.end() || !sockets->is_array() || sockets->empty() ||
        sockets->size() > kMaxSockets) {
      return bad("app " + *name + ": \"sockets\" must be an array of 1 to " +
                 std::to_string(kMaxSockets) + " paths");
    }
    AppGrant grant{*name, {}};
    for (const Json& s : *sockets) {
      if (!s.is_string() || s.get_ref<const std::string&>().empty() ||
          s.get_ref<const std::string&>().front() != '/' ||
          s.get_ref<const std::string&>().size() >= sizeof(sockaddr_un::sun_path) ||
          s.get_ref<const std::string&>().find('\0') != std::string::npos) {
        return bad("app " + *name +
                   ": a socket must be an absolute path that fits a unix "
                   "socket address");
      }
      grant.sockets.push_back(s.get<std::string>());
    }
    out.push_back(std::move(grant));
  }
  return out;
}

}  // namespace scalws::ipc
