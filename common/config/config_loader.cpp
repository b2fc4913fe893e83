#include "common/config/config_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "common/config/parse_context.h"
#include "common/config/sections.h"
#include "common/config/table_reader.h"
#include "common/config/toml_document.h"

namespace scalws::common::config {
namespace {

// A site config is a few kilobytes; anything this large is a wrong path, not a config.
constexpr off_t kMaxConfigBytes = 16 * 1024 * 1024;

constexpr SectionParser kSectionParsers[] = {
    {"server", parseServerSection},    {"listen", parseListenSection},
    {"site", parseSiteSection},        {"route", parseRouteSection},
    {"php_pool", parsePhpPoolSection}, {"upstream", parseUpstreamSection},
    {"cache", parseCacheSection},      {"real_ip", parseRealIpSection},
};

// The absolute directory of `source_name`: relative paths in the config are resolved
// against it, so the config means the same thing from any working directory.
std::string baseDirectory(std::string_view source_name) {
  std::error_code ec;
  std::filesystem::path absolute =
      std::filesystem::absolute(std::filesystem::path(source_name), ec);
  if (ec || absolute.empty()) return "/";
  std::filesystem::path dir = absolute.lexically_normal().parent_path();
  return dir.empty() ? "/" : dir.string();
}

Result<std::string> readWholeFile(const std::string& path) {
  const std::string what = "cannot read config file \"" + path + "\"";
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return errnoStatus(errno, what);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return errnoStatus(err, what);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return invalidArgument(what + ": not a regular file");
  }
  if (st.st_size > kMaxConfigBytes) {
    ::close(fd);
    return invalidArgument(what + ": larger than 16 MiB");
  }
  std::string text;
  char buffer[16384];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      return errnoStatus(err, what);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<size_t>(n));
    if (text.size() > static_cast<size_t>(kMaxConfigBytes)) {
      ::close(fd);
      return invalidArgument(what + ": larger than 16 MiB");
    }
  }
  ::close(fd);
  return text;
}

}  // namespace

std::span<const SectionParser> sectionParsers() {
  return kSectionParsers;
}

Result<SiteConfig> loadSiteConfigFile(const std::string& path, const LoadOptions& options) {
  Result<std::string> text = readWholeFile(path);
  if (!text.ok()) return text.status();
  return loadSiteConfigString(*text, path, options);
}

Result<SiteConfig> loadSiteConfigString(std::string_view text, std::string_view source_name,
                                        const LoadOptions& options) {
  Result<ConfigValue> root = parseTomlDocument(text, source_name);
  if (!root.ok()) return root.status();

  ParseContext ctx(options, baseDirectory(source_name));
  SiteConfig site;
  site.source = std::string(source_name);
  TableReader table(*root, "", ctx);
  for (const SectionParser& section : sectionParsers()) {
    if (const ConfigValue* value = table.get(section.key)) section.parse(*value, ctx, site);
  }
  table.finish();
  checkPhpPoolReferences(ctx, site);
  resolveUpstreamHosts(ctx, site);
  checkUpstreamReferences(ctx, site);
  checkCacheReferences(ctx, site);
  if (table.get("listen") == nullptr) table.tableError("at least one [[listen]] is required");

  Status status = ctx.toStatus();
  if (!status.ok()) return status;
  return site;
}

}  // namespace scalws::common::config
