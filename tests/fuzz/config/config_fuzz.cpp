// Fuzzes the config loader: any bytes must give a SiteConfig or an error listing
// "file:line:col: ..." lines — never a crash, a hang or an exception.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "common/config/config_loader.h"
#include "common/config/host_resolver.h"

namespace {

using scalws::common::StatusCode;
using scalws::common::config::LoadOptions;
using scalws::common::config::loadSiteConfigString;
using scalws::common::config::ServerTable;

// Upstream host names resolve without DNS: a fuzzer must not wait on the network. Names
// starting with "x" fail, as an unknown name would.
class FixedResolver final : public scalws::common::config::HostResolver {
 public:
  scalws::common::Result<std::vector<std::string>> resolve(const std::string& host) override {
    if (!host.empty() && host[0] == 'x') return scalws::common::invalidArgument("unknown name");
    return std::vector<std::string>{"127.0.0.1", "::1"};
  }
};

void check(std::string_view text, LoadOptions options) {
  static FixedResolver resolver;
  options.resolver = &resolver;
  auto site = loadSiteConfigString(text, "fuzz.toml", options);
  if (site.ok()) {
    // A config is accepted only with somewhere to listen and nothing half-parsed.
    if (site->listens.empty()) __builtin_trap();
    for (const auto& route : site->routes) {
      if (route.action.index() == 0) __builtin_trap();
    }
    if (options.server_table == ServerTable::kSiteOnly && site->server &&
        (!site->server->access_log.empty() || !site->server->error_log.empty() ||
         site->server->workers != 1 || !site->server->user.empty())) {
      __builtin_trap();
    }
    return;
  }
  if (site.status().code() != StatusCode::kInvalidArgument) __builtin_trap();
  if (site.status().message().rfind("fuzz.toml:", 0) != 0) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  check(text, LoadOptions{});
  LoadOptions instance;
  instance.server_table = ServerTable::kSiteOnly;
  check(text, instance);
  return 0;
}
