// The `cache_purge` action: a PURGE request removes what the named cache stored for the
// request's URI (every variant, in memory; the disk file of the request's own key), in
// every worker process of the site at once (they share the memory tier). Other methods
// get 405. Who may purge is the route's `policy.allow`.
//
// Answers 200 with "purged N\n" (N: memory entries removed; a disk file is removed
// behind the answer, by the disk thread).
#pragma once

#include <memory>

#include "common/config/cache_config.h"
#include "worker/handlers/cache/shared_cache.h"
#include "worker/http/handler.h"

namespace scalws::worker::cache {

class CachePurgeHandler final : public Handler {
 public:
  CachePurgeHandler(std::shared_ptr<SharedCache> cache, const common::config::CacheConfig& config)
      : cache_(std::move(cache)), config_(config) {}

  void handle(Request& request, ResponseWriter& writer) noexcept override;
  std::string_view actionName() const noexcept override { return "cache_purge"; }

 private:
  std::shared_ptr<SharedCache> cache_;
  common::config::CacheConfig config_;
};

}  // namespace scalws::worker::cache
