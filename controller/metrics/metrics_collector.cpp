#include "controller/metrics/metrics_collector.h"

#include <algorithm>
#include <chrono>
#include <limits>

#include "common/log.h"

namespace scalws::controller {

using common::Result;
using common::metrics::addCounters;
using common::metrics::metricsIncrease;
using state::MetricsResolution;
using state::MetricsRow;

namespace {

int64_t systemNowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

int64_t floorTo(int64_t ms, int64_t step) {
  int64_t q = ms / step;
  if (ms % step != 0 && ms < 0) --q;
  return q * step;
}

// The counters of `upstreams`, the gauges zeroed: what an ended worker leaves in the totals.
std::vector<common::metrics::UpstreamMetrics> countersOnly(
    std::vector<common::metrics::UpstreamMetrics> upstreams) {
  for (common::metrics::UpstreamMetrics& u : upstreams) {
    for (common::metrics::UpstreamServerMetrics& s : u.servers) {
      s.loops = 0;
      s.loops_down = 0;
      s.down_since_unix_ms = 0;
      s.failures = 0;
      s.active = 0;
      s.idle = 0;
    }
  }
  return upstreams;
}

// Windows longer than this read 1 min rows (fewer rows; the 10 s ones may be pruned).
constexpr int64_t kTenSecondRowsUpToMs = 3600 * 1000;

}  // namespace

MetricsCollector::MetricsCollector(state::StateStore& store, Options options)
    : store_(store),
      clock_(options.clock ? std::move(options.clock) : Clock(&systemNowMs)),
      retention_(options.retention),
      prune_every_ms_(options.prune_every_ms) {
  last_boundary_ms_ = floorTo(clock_(), kBucketMs);
  minutes_done_ms_ = floorTo(clock_(), kMinuteMs) - kMinuteCatchUp * kMinuteMs;
  last_prune_ms_ = std::numeric_limits<int64_t>::min() / 2;  // prune on the first tick
}

void MetricsCollector::workerSnapshot(const std::string& instance, int64_t pid, bool fresh,
                                      const MetricsSnapshot& s) {
  int64_t now = clock_();
  auto it = instances_.find(instance);
  if (it == instances_.end()) {
    it = instances_.emplace(instance, InstanceMetrics(now, last_boundary_ms_)).first;
  }
  it->second.onSnapshot(pid, fresh, s, now);
}

void MetricsCollector::workerExited(const std::string& instance, int64_t pid) {
  auto it = instances_.find(instance);
  if (it != instances_.end()) it->second.onExit(pid);
  auto up = upstreams_.find(instance);
  if (up == upstreams_.end()) return;
  auto worker = up->second.live.find(pid);
  if (worker == up->second.live.end()) return;
  common::metrics::addUpstreamMetrics(up->second.ended, countersOnly(std::move(worker->second)));
  up->second.live.erase(worker);
}

void MetricsCollector::workerUpstreams(const std::string& instance, int64_t pid,
                                       std::vector<common::metrics::UpstreamMetrics> upstreams) {
  upstreams_[instance].live[pid] = std::move(upstreams);
}

std::vector<common::metrics::UpstreamMetrics> MetricsCollector::upstreamsNow(
    const std::string& instance) const {
  std::vector<common::metrics::UpstreamMetrics> out;
  auto it = upstreams_.find(instance);
  if (it == upstreams_.end()) return out;
  for (const auto& [pid, list] : it->second.live) common::metrics::addUpstreamMetrics(out, list);
  return out;
}

std::vector<common::metrics::UpstreamMetrics> MetricsCollector::upstreamTotals(
    const std::string& instance) const {
  std::vector<common::metrics::UpstreamMetrics> out = upstreamsNow(instance);
  auto it = upstreams_.find(instance);
  if (it != upstreams_.end()) common::metrics::addUpstreamMetrics(out, it->second.ended);
  return out;
}

void MetricsCollector::forget(const std::string& instance) {
  instances_.erase(instance);
  upstreams_.erase(instance);
}

void MetricsCollector::tick() {
  int64_t now = clock_();
  for (auto& [name, m] : instances_) m.sample(now);
  int64_t boundary = floorTo(now, kBucketMs);
  if (boundary > last_boundary_ms_) {
    last_boundary_ms_ = boundary;
    rollUp10s(boundary);
  }
  int64_t minute = floorTo(now, kMinuteMs);
  if (minute > minutes_done_ms_) {
    rollUpMinutes(std::max(minutes_done_ms_, minute - kMinuteCatchUp * kMinuteMs), minute);
    minutes_done_ms_ = minute;
  }
  if (now - last_prune_ms_ >= prune_every_ms_) {
    last_prune_ms_ = now;
    Result<state::PruneCounts> pruned = store_.prune(now, retention_);
    if (!pruned.ok()) {
      LOG_WARN("metrics: cannot prune the DB: %s", pruned.status().message().c_str());
    } else if (pruned->metrics_10s + pruned->metrics_1m > 0) {
      LOG_INFO("metrics: pruned %lld 10 s row(s), %lld 1 min row(s)",
               static_cast<long long>(pruned->metrics_10s),
               static_cast<long long>(pruned->metrics_1m));
    }
  }
}

void MetricsCollector::rollUp10s(int64_t boundary_ms) {
  std::vector<MetricsRow> rows;
  for (auto& [name, m] : instances_) {
    MetricsSnapshot increase = m.closeBucket(boundary_ms);
    // A stopped instance writes nothing, rather than a row of zeros every 10 s.
    if (m.liveWorkers() == 0 && increase == MetricsSnapshot()) continue;
    rows.push_back(MetricsRow{name, boundary_ms - kBucketMs, increase});
  }
  if (rows.empty()) return;
  Result<int64_t> written = store_.insertMetrics(MetricsResolution::k10s, rows);
  if (!written.ok()) {
    if (!store_failing_) {
      LOG_WARN("metrics: cannot write 10 s rows: %s", written.status().message().c_str());
    }
    store_failing_ = true;
    return;
  }
  store_failing_ = false;
}

void MetricsCollector::rollUpMinutes(int64_t after_ms, int64_t up_to_ms) {
  // Every stored instance, not only those with figures here: a minute that ended while
  // no controller ran, or one an instance stopped in, still gets its 1 min row.
  Result<std::vector<state::InstanceRecord>> all = store_.listInstances();
  if (!all.ok()) {
    LOG_WARN("metrics: cannot list instances: %s", all.status().message().c_str());
    return;
  }
  std::vector<MetricsRow> rows;
  for (const state::InstanceRecord& instance : *all) {
    Result<std::vector<MetricsRow>> tens =
        store_.listMetrics(instance.name, MetricsResolution::k10s, after_ms, up_to_ms);
    if (!tens.ok()) {
      LOG_WARN("metrics: cannot read the 10 s rows of %s: %s", instance.name.c_str(),
               tens.status().message().c_str());
      continue;
    }
    for (const MetricsRow& row : *tens) {  // oldest first: one minute after the other
      int64_t start = floorTo(row.bucket_ms, kMinuteMs);
      if (rows.empty() || rows.back().instance != instance.name || rows.back().bucket_ms != start) {
        MetricsRow minute;
        minute.instance = instance.name;
        minute.bucket_ms = start;
        rows.push_back(std::move(minute));
      }
      state::mergeMetrics(rows.back(), row);
    }
  }
  if (rows.empty()) return;
  Result<int64_t> written = store_.insertMetrics(MetricsResolution::k1m, rows);
  if (!written.ok()) {
    LOG_WARN("metrics: cannot write 1 min rows: %s", written.status().message().c_str());
  }
}

MetricsCollector::Window MetricsCollector::recent(const std::string& instance) const {
  Window w;
  w.to_ms = clock_();
  w.from_ms = w.to_ms - kRecentSpanMs;
  auto it = instances_.find(instance);
  if (it == instances_.end()) return w;
  const InstanceMetrics::Sample& base = it->second.recentBase(w.to_ms, kRecentSpanMs);
  w.figures = metricsIncrease(it->second.total(), base.total);
  w.from_ms = base.time_ms;
  w.known = true;
  return w;
}

Result<MetricsCollector::Window> MetricsCollector::window(const std::string& instance,
                                                          int64_t span_ms) {
  Window w;
  w.to_ms = clock_();
  int64_t start = w.to_ms - span_ms;
  auto it = instances_.find(instance);
  int64_t rows_to = floorTo(w.to_ms, kBucketMs);
  if (it != instances_.end()) {
    bool covered = false;
    const InstanceMetrics::Sample& base = it->second.windowBase(start, &covered);
    w.figures = metricsIncrease(it->second.total(), base.total);
    w.known = true;
    if (covered) {
      w.from_ms = base.time_ms;
      return w;
    }
    rows_to = floorTo(base.time_ms, kBucketMs);
  }
  // What memory does not hold: the rows before it (a previous controller's too).
  Result<MetricsSnapshot> stored =
      fromRows(instance, start, rows_to, span_ms > kTenSecondRowsUpToMs);
  if (!stored.ok()) return stored.status();
  if (*stored != MetricsSnapshot()) w.known = true;
  if (it == instances_.end()) {
    w.figures = *stored;
    w.figures.conn_active = 0;  // nothing runs that we know of
    w.figures.rss_bytes = 0;
  } else {
    addCounters(w.figures, *stored);
  }
  w.from_ms = floorTo(start, kBucketMs);
  return w;
}

Result<MetricsSnapshot> MetricsCollector::fromRows(const std::string& instance, int64_t from_ms,
                                                   int64_t to_ms, bool minutes) {
  MetricsRow sum;
  auto add = [&](MetricsResolution resolution, int64_t from, int64_t to) -> common::Status {
    if (to <= from) return common::okStatus();
    Result<std::vector<MetricsRow>> rows = store_.listMetrics(instance, resolution, from, to);
    if (!rows.ok()) return rows.status();
    for (const MetricsRow& row : *rows) state::mergeMetrics(sum, row);
    return common::okStatus();
  };
  int64_t tens_from = floorTo(from_ms, kBucketMs);
  if (minutes) {
    int64_t minutes_to = floorTo(to_ms, kMinuteMs);
    SCALWS_RETURN_IF_ERROR(add(MetricsResolution::k1m, floorTo(from_ms, kMinuteMs), minutes_to));
    tens_from = std::max(tens_from, minutes_to);
  }
  SCALWS_RETURN_IF_ERROR(add(MetricsResolution::k10s, tens_from, to_ms));
  return sum.figures;
}

std::vector<std::pair<std::string, MetricsSnapshot>> MetricsCollector::totals() const {
  std::vector<std::pair<std::string, MetricsSnapshot>> out;
  out.reserve(instances_.size());
  for (const auto& [name, m] : instances_) out.emplace_back(name, m.total());
  return out;
}

size_t MetricsCollector::liveWorkers(const std::string& instance) const {
  auto it = instances_.find(instance);
  return it == instances_.end() ? 0 : it->second.liveWorkers();
}

}  // namespace scalws::controller
