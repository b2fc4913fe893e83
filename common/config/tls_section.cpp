// listen.tls: certificates (a default plus more chosen by SNI), OCSP files and session
// resumption settings. Only paths and values are checked here; the files themselves are
// loaded (and refused, naming the file) when the worker builds its snapshot.
#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/text_checks.h"

namespace scalws::common::config {
namespace {

constexpr Milliseconds kMinRotation = 1'000;
constexpr Milliseconds kMaxRotation = 7 * 24 * 3'600'000ull;
constexpr int64_t kMaxSessionCache = 10'000'000;
constexpr std::string_view kCertificateNames = "leave it out to use the certificate's";

void readPath(TableReader& table, std::string_view key, bool required, std::string& out) {
  const ConfigValue* value = required ? table.require(key) : table.get(key);
  if (value == nullptr) return;
  std::string path;
  if (!table.readString(key, path)) return;
  if (path.empty()) {
    table.error(*value, key, "must not be empty");
    return;
  }
  out = table.context().resolvePath(path);
}

}  // namespace

void readServerNames(TableReader& table, std::vector<std::string>& out, std::string_view if_empty) {
  const ConfigValue* value = table.get("names");
  if (value == nullptr) return;
  std::vector<std::string> names;
  bool ok = forEachString(*value, table.keyPath("names"), table.context(),
                          [&](const ConfigValue& element, const std::string& path) {
                            std::string name = toLowerAscii(element.string);
                            std::string problem = checkServerName(name);
                            if (!problem.empty()) {
                              table.context().error(element.where, path + ": " + problem);
                              return;
                            }
                            names.push_back(std::move(name));
                          });
  if (!ok || names.size() != (value->is(ConfigValue::Type::kArray) ? value->array.size() : 1)) {
    return;  // every misfit is already reported
  }
  if (names.empty()) {
    table.error(*value, "names", "must not be empty (" + std::string(if_empty) + ")");
    return;
  }
  out = std::move(names);
}

namespace {

void readCertificates(TableReader& tls, TlsConfig& config) {
  const ConfigValue* value = tls.get("certificates");
  if (value == nullptr) return;
  std::string path = tls.keyPath("certificates");
  if (!expectType(*value, ConfigValue::Type::kArray, path, tls.context())) return;
  for (size_t i = 0; i < value->array.size(); ++i) {
    const ConfigValue& element = value->array[i];
    std::string element_path = path + "[" + std::to_string(i) + "]";
    if (!expectType(element, ConfigValue::Type::kTable, element_path, tls.context())) continue;
    TlsCertificateConfig cert;
    cert.where = element.where;
    TableReader table(element, element_path, tls.context());
    readPath(table, "cert", true, cert.cert);
    readPath(table, "key", true, cert.key);
    readPath(table, "ocsp", false, cert.ocsp);
    readServerNames(table, cert.names, kCertificateNames);
    table.finish();
    config.certificates.push_back(std::move(cert));
  }
}

void readRotation(TableReader& tls, TlsConfig& config) {
  Milliseconds ms = 0;
  if (!tls.readDuration("ticket_rotation", ms)) return;
  if (ms < kMinRotation || ms > kMaxRotation) {
    tls.error(*tls.get("ticket_rotation"), "ticket_rotation", "must be between 1s and 7 days");
    return;
  }
  config.ticket_rotation = ms;
}

void readSessionTimeout(TableReader& tls, TlsConfig& config) {
  Milliseconds ms = 0;
  if (!tls.readDuration("session_timeout", ms)) return;
  if (ms < 1'000) {
    tls.error(*tls.get("session_timeout"), "session_timeout", "must be at least 1s");
    return;
  }
  config.session_timeout = ms;
}

}  // namespace

void parseTlsTable(const ConfigValue& value, const std::string& path, ParseContext& ctx,
                   TlsConfig& tls) {
  tls.where = value.where;
  TableReader table(value, path, ctx);
  readPath(table, "cert", true, tls.cert);
  readPath(table, "key", true, tls.key);
  readPath(table, "ocsp", false, tls.ocsp);
  readServerNames(table, tls.names, kCertificateNames);
  readCertificates(table, tls);
  table.readBool("session_tickets", tls.session_tickets);
  readPath(table, "ticket_key_file", false, tls.ticket_key_file);
  readRotation(table, tls);
  table.readInteger("session_cache", 0, kMaxSessionCache, tls.session_cache);
  readSessionTimeout(table, tls);
  table.finish();
}

}  // namespace scalws::common::config
