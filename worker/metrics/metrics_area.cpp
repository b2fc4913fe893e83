#include "worker/metrics/metrics_area.h"

#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <new>

namespace scalws::worker {

using common::metrics::MetricsSnapshot;

// Slot i's counters, the retired totals, and a lock-free "retired" snapshot: the retired
// block is written only by the parent (between children), read by everyone.
struct MetricsArea::Layout {
  std::atomic<uint64_t> claimed{0};  // slots [0, claimed) were claimed at least once
  LoopCounters retired;
  LoopCounters slot[1];  // `slots_` of them follow
};

common::Result<std::unique_ptr<MetricsArea>> MetricsArea::create(size_t slots, bool claim_all) {
  if (slots == 0) slots = 1;
  size_t bytes = sizeof(Layout) + (slots - 1) * sizeof(LoopCounters);
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return common::errnoStatus(errno, "mmap metrics area");
  // Fresh anonymous pages are zero, which is what every counter starts at; placement-new
  // makes the atomics' lifetime begin formally.
  auto* layout = static_cast<Layout*>(p);
  new (&layout->claimed) std::atomic<uint64_t>(0);
  new (&layout->retired) LoopCounters();
  std::unique_ptr<MetricsArea> area(new MetricsArea(layout, slots, bytes));
  if (claim_all) {
    for (size_t i = 0; i < slots; ++i) area->claim(i);
  }
  return area;
}

void MetricsArea::claim(size_t i) {
  if (i >= slots_) return;
  new (&layout_->slot[i]) LoopCounters();
  if (layout_->claimed.load(std::memory_order_relaxed) < i + 1) {
    layout_->claimed.store(i + 1, std::memory_order_release);
  }
}

MetricsArea::~MetricsArea() {
  munmap(layout_, bytes_);
}

LoopCounters* MetricsArea::slot(size_t i) {
  return i < slots_ ? &layout_->slot[i] : nullptr;
}

void MetricsArea::retire(size_t i) {
  if (i >= slots_) return;
  MetricsSnapshot last;
  layout_->slot[i].addTo(last);
  // Its counters stay counted, its connections count as closed; its RSS is gone with it.
  MetricsSnapshot folded;
  common::metrics::foldEnded(folded, last);
  layout_->retired.add(folded);
  layout_->slot[i].reset();
}

MetricsSnapshot MetricsArea::total() const {
  MetricsSnapshot s;
  layout_->retired.addTo(s);
  // Never-claimed slots are never read: reading would fault their pages in.
  size_t claimed = layout_->claimed.load(std::memory_order_acquire);
  for (size_t i = 0; i < claimed && i < slots_; ++i) layout_->slot[i].addTo(s);
  return s;
}

}  // namespace scalws::worker
