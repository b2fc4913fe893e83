#include "controller/apps/memory_thrash.h"

namespace scalws::controller {

ThrashWatch::ThrashWatch(uint64_t page_bytes) : page_bytes_(page_bytes) {}

bool ThrashWatch::thrashing(const CgroupUsage& now) {
  bool had_last = have_last_;
  CgroupUsage last = last_;
  have_last_ = true;
  last_ = now;
  // Counters that went back (the cgroup was made again) start a new count.
  if (!had_last || now.limit_bytes == 0 || now.refaulted_pages < last.refaulted_pages ||
      now.major_faults < last.major_faults) {
    looks_in_a_row_ = 0;
    refaulted_in_a_row_ = 0;
    return false;
  }
  uint64_t refaulted = (now.refaulted_pages - last.refaulted_pages) * page_bytes_;
  bool at_limit = now.current_bytes + now.limit_bytes / 16 >= now.limit_bytes;
  bool rereading = refaulted >= now.limit_bytes / 4 &&
                   now.major_faults - last.major_faults >= kThrashMajorFaultsPerLook;
  if (!at_limit || !rereading) {
    looks_in_a_row_ = 0;
    refaulted_in_a_row_ = 0;
    return false;
  }
  ++looks_in_a_row_;
  refaulted_in_a_row_ += refaulted;
  return looks_in_a_row_ >= kThrashLooks;
}

void ThrashWatch::reset() {
  have_last_ = false;
  looks_in_a_row_ = 0;
  refaulted_in_a_row_ = 0;
}

uint64_t ThrashWatch::refaultedBytesPerLook() const {
  return looks_in_a_row_ == 0 ? 0 : refaulted_in_a_row_ / static_cast<uint64_t>(looks_in_a_row_);
}

}  // namespace scalws::controller
