// route.auth: HTTP Basic authentication of a route against an htpasswd file. The file is
// read when the worker builds its config snapshot (worker/auth/), not here: the loader
// only checks the shape, so `scalwsctl instance add` does not need the tenant's file.
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {

void parseRouteAuth(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                    AuthConfig& auth) {
  if (!expectType(value, ConfigValue::Type::kTable, path, ctx)) return;
  auth.where = value.where;
  TableReader table(value, path, ctx);
  if (table.require("realm") != nullptr && table.readString("realm", auth.realm)) {
    // RFC 7617 §2: the realm is a quoted-string; keep it to what needs no escaping.
    bool plain = !auth.realm.empty();
    for (char c : auth.realm) {
      auto u = static_cast<unsigned char>(c);
      plain = plain && u >= 0x20 && u != 0x7f && c != '"' && c != '\\';
    }
    if (!plain) {
      table.error(*table.get("realm"), "realm",
                  "must be non-empty text without quotes, backslashes or control characters");
    }
  }
  std::string users;
  if (table.require("users") != nullptr && table.readString("users", users)) {
    if (users.empty() || users.find('\0') != std::string::npos) {
      table.error(*table.get("users"), "users", "must name an htpasswd file");
    } else {
      auth.users = ctx.resolvePath(users);
    }
  }
  table.finish();
}

}  // namespace scalws::common::config
