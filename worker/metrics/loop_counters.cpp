#include "worker/metrics/loop_counters.h"

namespace scalws::worker {

using common::metrics::MetricsSnapshot;

namespace {

// Calls f(counter, value) for each counter of `c` beside the same figure of `s`.
template <typename Counters, typename Snapshot, typename F>
void forEachPair(Counters& c, Snapshot& s, F f) {
#define SCALWS_PAIR_LABELLED(member, ...) \
  for (size_t i = 0; i < c.member.size(); ++i) f(c.member[i], s.member[i]);
  SCALWS_METRICS_LABELLED(SCALWS_PAIR_LABELLED)
#undef SCALWS_PAIR_LABELLED
#define SCALWS_PAIR_SCALAR(member, ...) f(c.member, s.member);
  SCALWS_METRICS_SCALARS(SCALWS_PAIR_SCALAR)
#undef SCALWS_PAIR_SCALAR
  for (size_t i = 0; i < c.latency.size(); ++i) f(c.latency[i], s.latency[i]);
}

}  // namespace

void LoopCounters::countRequest(uint16_t status, common::metrics::Action action,
                                uint64_t us) noexcept {
#ifdef SCALWS_METRICS_OFF
  (void)status, (void)action, (void)us;
  return;
#endif
  size_t cls = status >= 100 && status < 600 ? status / 100 - 1 : 4;
  requests_by_class[cls].add();
  requests_by_action[static_cast<size_t>(action)].add();
  latency_sum_us.add(us);
  latency[common::metrics::latencyBucket(us)].add();
}

void LoopCounters::addTo(MetricsSnapshot& out) const {
  forEachPair(*this, out, [](const RelaxedCounter& c, uint64_t& v) { v += c.value(); });
}

void LoopCounters::add(const MetricsSnapshot& s) noexcept {
  forEachPair(*this, s, [](RelaxedCounter& c, uint64_t v) { c.add(v); });
}

void LoopCounters::reset() noexcept {
  MetricsSnapshot none;
  forEachPair(*this, none, [](RelaxedCounter& c, uint64_t) { c.set(0); });
}

}  // namespace scalws::worker
