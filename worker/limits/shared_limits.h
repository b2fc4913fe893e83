// A site's limit table (common/limits/limit_table.h) as a process holds it: the memfd and
// this process's mapping of it.
//
// Made by whoever starts the workers, like the caches' memory tiers (CacheSet::forSite:
// the standalone master before it forks, a single-mode process for itself; an instance
// worker adopts the controller's fd) and mapped at once, before any fork and before the
// sandbox, so the workers inherit or make their mapping without a syscall the sandbox
// would have to allow. A reload keeps it when [site] limit_table is unchanged, so the
// clients' counts survive.
#pragma once

#include <memory>

#include "common/limits/limit_table.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::worker::limits {

class SharedLimits {
 public:
  // A new table of `bytes` (memfd_create).
  static common::Result<std::shared_ptr<SharedLimits>> create(uint64_t bytes);
  // The table made by someone else (the controller) for `bytes`, passed as `fd`: refused
  // when its size or header is not what create() makes for `bytes`.
  static common::Result<std::shared_ptr<SharedLimits>> adopt(uint64_t bytes, common::UniqueFd fd);

  uint64_t bytes() const { return bytes_; }
  int fd() const { return fd_.get(); }
  common::limits::LimitTable& table() { return table_; }

 private:
  SharedLimits(uint64_t bytes, common::UniqueFd fd, common::limits::LimitTable table)
      : bytes_(bytes), fd_(std::move(fd)), table_(std::move(table)) {}

  uint64_t bytes_;
  common::UniqueFd fd_;
  common::limits::LimitTable table_;
};

// The memfd's name, as /proc shows it ("/memfd:scalws-limits (deleted)").
inline constexpr const char* kLimitAreaName = "scalws-limits";

}  // namespace scalws::worker::limits
