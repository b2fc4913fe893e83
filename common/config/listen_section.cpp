// [[listen]]: the addresses a site accepts connections on, with optional TLS and h2.
#include "common/config/listen_address.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"

namespace scalws::common::config {
namespace {

void readTls(TableReader& listen, ListenConfig& config) {
  const ConfigValue* value = listen.get("tls");
  if (value == nullptr) return;
  std::string path = listen.keyPath("tls");
  if (!expectType(*value, ConfigValue::Type::kTable, path, listen.context())) return;
  TlsConfig tls;
  parseTlsTable(*value, path, listen.context(), tls);
  config.tls = std::move(tls);
}

// http3 = true needs TLS (QUIC has no plain-text mode) and a build that has HTTP/3.
void readHttp3(TableReader& listen, ListenConfig& config) {
  const ConfigValue* http3 = listen.get("http3");
  const ConfigValue* quic = listen.get("quic");
  if (http3 != nullptr && listen.readBool("http3", config.http3) && config.http3) {
    if (!config.tls.has_value()) {
      listen.error(*http3, "http3", "needs tls on the same listener (QUIC is always encrypted)");
    } else if (!SCALWS_HTTP3) {
      listen.error(*http3, "http3",
                   "this scalwsd was built without HTTP/3 (cmake -DSCALWS_HTTP3=ON with "
                   "libngtcp2-dev, libngtcp2-crypto-gnutls-dev and libnghttp3-dev)");
    }
  }
  if (quic == nullptr) return;
  std::string path = listen.keyPath("quic");
  if (!config.http3) {
    listen.error(*quic, "quic", "only applies with http3 = true");
    return;
  }
  if (!expectType(*quic, ConfigValue::Type::kTable, path, listen.context())) return;
  parseQuicTable(*quic, path, listen.context(), config.quic);
}

// False when the entry is unusable (no valid address).
bool parseListen(const ConfigValue& value, ParseContext& ctx, ListenConfig& config) {
  if (!expectType(value, ConfigValue::Type::kTable, "listen", ctx)) return false;
  config.where = value.where;
  TableReader table(value, "listen", ctx);
  bool ok = false;
  if (const ConfigValue* address = table.require("address");
      address != nullptr && table.readString("address", config.address)) {
    Result<ListenAddress> parsed = parseListenAddress(config.address);
    if (parsed.ok()) {
      config.host = parsed->host;
      config.port = parsed->port;
      ok = true;
    } else {
      table.error(*address, "address", parsed.status().message());
    }
  }
  readTls(table, config);
  // TLS listeners offer h2 through ALPN unless told not to; plain ones need to be asked.
  config.http2 = config.tls.has_value();
  table.readBool("http2", config.http2);
  readHttp3(table, config);
  readServerNames(table, config.names,
                  config.tls ? "leave it out to use the certificates' names" : "leave it out");
  table.readBool("default", config.is_default);
  table.readBool("proxy_protocol", config.proxy_protocol);
  table.finish();
  return ok;
}

}  // namespace

void parseListenSection(const ConfigValue& value, ParseContext& ctx, SiteConfig& site) {
  if (!value.is(ConfigValue::Type::kArray)) {
    ctx.error(value.where, "listen: expected an array of tables ([[listen]]), found " +
                               std::string(describeType(value.type)));
    return;
  }
  if (value.array.empty()) {
    ctx.error(value.where, "listen: at least one [[listen]] is required");
    return;
  }
  for (const ConfigValue& element : value.array) {
    ListenConfig config;
    if (!parseListen(element, ctx, config)) continue;
    // "*:80" and "0.0.0.0:80" are one socket: compare the parsed forms.
    const ListenConfig* same = nullptr;
    for (const ListenConfig& earlier : site.listens) {
      if (earlier.host == config.host && earlier.port == config.port) same = &earlier;
    }
    if (same != nullptr) {
      const ConfigValue& address = element.find("address")->value;
      ctx.error(address.where, "listen.address: duplicate address \"" + config.address +
                                   "\" (already listened on as \"" + same->address + "\" at " +
                                   same->where.toString() + ")");
      continue;
    }
    site.listens.push_back(std::move(config));
  }
}

}  // namespace scalws::common::config
