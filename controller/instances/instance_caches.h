// The memory tiers of an instance's response caches ([cache.NAME] of its config), made by
// the controller so every worker of the instance maps the same one: an entry one worker
// stored is a hit in all of them, and it outlives any one worker (a replacement gets the
// same area). No other instance's workers are ever given the fd, and the controller maps
// an area only while it makes it (common/cache/shared_area.h), never after a worker could
// have written to it.
//
// Made at start, kept while the instance runs, dropped when it stops. A reload keeps them
// when every cache's storage (memory, disk, max_disk, max_entry) is unchanged; otherwise
// the new config needs a restart (fits() says which). The site's limit table (common/
// limits/limit_table.h, when the config has a `limit`) is one more area, made, passed and
// checked the same way under the name ipc::kLimitAreaName; a reload keeps it while
// [site] limit_table is unchanged. After a controller restart the areas
// are taken back from the re-attached workers (adoptFrom), checked to be what this config
// makes, so workers started later share them.
#pragma once

#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/cache_messages.h"

namespace scalws::controller {

class InstanceCaches {
 public:
  // A new area for every [cache] of `site`, and its limit table.
  static common::Result<InstanceCaches> make(const common::config::SiteConfig& site);

  // The areas `pidfd`'s worker reports (ready or attach hello), copied out of its fd table
  // and checked: one per [cache] of `site`, each a memfd the controller made for that cache
  // (its name) of the size that cache's memory gives. Anything else is refused: the worker
  // is then not one we keep.
  static common::Result<InstanceCaches> adoptFrom(int pidfd,
                                                  const std::vector<ipc::CacheAreaReport>& reported,
                                                  const common::config::SiteConfig& site);

  bool empty() const { return areas_.empty() && !limits_fd_.valid(); }
  // Whether these areas serve `site` as they are (a reload may keep them).
  bool fits(const common::config::SiteConfig& site) const;
  // Whether `other` holds the same areas (the same memfds), as two workers of one instance
  // must.
  bool sameAreas(const InstanceCaches& other) const;
  // The names, in the order duplicateFds() gives the fds (ListenersArgs::caches); the
  // limit table last.
  std::vector<std::string> names() const;
  common::Result<std::vector<common::UniqueFd>> duplicateFds() const;

 private:
  struct Area {
    common::config::CacheConfig config;
    common::UniqueFd fd;
  };
  std::vector<Area> areas_;
  common::UniqueFd limits_fd_;  // the limit table; invalid when the site limits nothing
  uint64_t limits_bytes_ = 0;
};

}  // namespace scalws::controller
