// The messages about an instance's response caches ([cache.NAME] of its config), one struct
// each with its one encoder and decoder:
//   - CacheAreaReport: a cache's memory tier as a worker holds it (the memfd the controller
//     made, by fd number in the worker's table), in `ready` and an attach hello, so a
//     controller re-attaching can take a copy (pidfd_getfd) and hand it to replacements;
//   - CachePurge: what to drop (one URL, every URL under a prefix, or everything), from
//     scalwsctl to the controller (`instance.cache.purge`, with the instance) and from the
//     controller to each of the instance's workers (`cache_purge`), and the count dropped;
//   - CacheFigures: a cache's size as a worker sees it (the area is shared, so every worker
//     of the instance sees the same), sent with its metrics.
// Cache names are what the config allows (common::config::isCacheName); a decoder refuses
// anything else, so a name is safe to print. The site's limit table (common/limits/) goes
// with the cache areas under the one name no cache can have, kLimitAreaName.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ipc {

inline constexpr size_t kMaxCachePurgeTargetLength = 8192;
// The limit table among the areas of ListenersArgs::caches and CacheAreaReport.
inline constexpr std::string_view kLimitAreaName = "@limits";
// A cache name, or kLimitAreaName.
bool isAreaName(std::string_view name);

struct CacheAreaReport {
  std::string name;
  int fd = -1;

  friend bool operator==(const CacheAreaReport&, const CacheAreaReport&) = default;
};

Json cacheAreaReportsJson(const std::vector<CacheAreaReport>& reports);
// The "caches" array of `args`; absent means none.
common::Result<std::vector<CacheAreaReport>> cacheAreaReportsFrom(const Json& args);

struct CachePurge {
  enum class Scope { kUrl, kPrefix, kAll };

  std::string instance;  // control socket only ("name" on the wire); "" to a worker
  std::string cache;     // one [cache.NAME]; "" = every cache of the instance
  Scope scope = Scope::kUrl;
  // kUrl: an absolute URL ("https://shop.example/a?b=1"); kPrefix: the start of such URLs
  // ("https://shop.example/blog/"); kAll: "". Decoded as the cache keys requests: the host
  // in lower case, without a port.
  std::string target;

  Json encode() const;
  static common::Result<CachePurge> decode(const Json& args);
};

// What a purge dropped: entries of the memory tier and files of the disk tier.
struct CachePurgeResult {
  uint64_t memory_entries = 0;
  uint64_t disk_files = 0;

  Json encode() const;
  static common::Result<CachePurgeResult> decode(const Json& result);
};

struct CacheFigures {
  std::string name;
  uint64_t entries = 0;
  uint64_t memory_bytes = 0;  // the entries' bytes in the memory tier
  uint64_t disk_bytes = 0;    // the disk tier's files (0 without one)

  friend bool operator==(const CacheFigures&, const CacheFigures&) = default;
};

Json cacheFiguresJson(const std::vector<CacheFigures>& figures);
common::Result<std::vector<CacheFigures>> cacheFiguresFrom(const Json& list);

}  // namespace scalws::ipc
