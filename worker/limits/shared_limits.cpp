#include "worker/limits/shared_limits.h"

namespace scalws::worker::limits {

common::Result<std::shared_ptr<SharedLimits>> SharedLimits::create(uint64_t bytes) {
  common::Result<common::UniqueFd> fd = common::limits::LimitTable::create(kLimitAreaName, bytes);
  if (!fd.ok()) return fd.status();
  return adopt(bytes, std::move(fd).value());
}

common::Result<std::shared_ptr<SharedLimits>> SharedLimits::adopt(uint64_t bytes,
                                                                  common::UniqueFd fd) {
  common::Result<common::limits::LimitTable> table =
      common::limits::LimitTable::attach(fd.get(), bytes);
  if (!table.ok()) return table.status();
  return std::shared_ptr<SharedLimits>(
      new SharedLimits(bytes, std::move(fd), std::move(table).value()));
}

}  // namespace scalws::worker::limits
