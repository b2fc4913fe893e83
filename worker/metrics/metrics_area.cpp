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
  MetricsSnapshot s;
  layout_->slot[i].addTo(s);
  LoopCounters& r = layout_->retired;
  for (size_t c = 0; c < 5; ++c) r.requests_by_class[c].add(s.requests_by_class[c]);
  for (size_t a = 0; a < common::metrics::kActionCount; ++a) {
    r.requests_by_action[a].add(s.requests_by_action[a]);
  }
  r.bytes_in.add(s.bytes_in);
  r.bytes_out.add(s.bytes_out);
  r.conn_accepted.add(s.conn_accepted);
  // The dead process's connections are gone: count them closed, not active.
  r.conn_closed.add(s.conn_closed + s.conn_active);
  r.tls_handshakes.add(s.tls_handshakes);
  r.http3_requests.add(s.http3_requests);
  r.quic_handshakes.add(s.quic_handshakes);
  r.quic_retries.add(s.quic_retries);
  r.quic_migrations.add(s.quic_migrations);
  r.quic_lost_packets.add(s.quic_lost_packets);
  r.file_cache_hits.add(s.file_cache_hits);
  r.file_cache_misses.add(s.file_cache_misses);
  r.upstream_connects.add(s.upstream_connects);
  r.upstream_reuses.add(s.upstream_reuses);
  r.upstream_errors.add(s.upstream_errors);
  r.php_connects.add(s.php_connects);
  r.php_reuses.add(s.php_reuses);
  r.php_errors.add(s.php_errors);
  r.php_waits.add(s.php_waits);
  r.php_wait_us.add(s.php_wait_us);
  r.cpu_us.add(s.cpu_us);  // CPU spent stays spent; RSS of a dead process is not kept
  r.latency_sum_us.add(s.latency_sum_us);
  for (size_t b = 0; b < common::metrics::kLatencyBuckets; ++b) r.latency[b].add(s.latency[b]);
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
