#include "worker/handlers/proxy/cache_exchange.h"

#include <cstring>

#include "common/log.h"
#include "worker/handlers/cache/cache_key.h"
#include "worker/handlers/cache/cache_loop.h"
#include "worker/handlers/cache/hash64.h"
#include "worker/handlers/cache/invalidation.h"
#include "worker/handlers/cache/stored_response.h"
#include "worker/handlers/cache/vary.h"
#include "worker/handlers/proxy/proxy_exchange.h"
#include "worker/handlers/proxy/upstream_pools.h"
#include "worker/http/error_response.h"
#include "worker/loop/worker_loop.h"

namespace scalws::worker::proxy {

using cache::CacheStatus;
using cache::MemoryStore;

namespace {

// Bodies up to this size are copied out of the shared mapping under its lock (nothing
// stays pinned); larger ones are pinned and sent from the mapping.
constexpr size_t kCopyLimit = 8 * 1024;
// How often a request waiting for another one's fill looks again.
constexpr uint64_t kWaitPollMs = 5;
constexpr uint32_t kMaxRelooks = 4;

// Whether a stored entry's secondary key fits this request (vary.h).
class RequestVary final : public cache::VaryMatcher {
 public:
  explicit RequestVary(const Request& request) : request_(request) {}
  bool matches(std::string_view stored) const override {
    if (stored.empty()) return true;
    std::string mine;
    cache::appendSecondaryKey(cache::secondaryKeyNames(stored), request_, mine);
    return mine == stored;
  }

 private:
  const Request& request_;
};

std::string_view fieldOf(std::span<const HeaderField> headers, std::string_view name) {
  for (const HeaderField& h : headers) {
    if (equalsIgnoreCase(h.name, name)) return h.value;
  }
  return {};
}

// RFC 9111 §3.2: a 304's fields replace the stored ones of the same name, and Age is ours.
std::string mergedHead(std::string_view stored, std::span<const HeaderField> fresh) {
  HeaderField fields[cache::kMaxStoredFields];
  size_t count = 0;
  std::string out;
  if (cache::splitStoredHead(stored, fields, count)) {
    for (size_t i = 0; i < count; ++i) {
      if (fieldOf(fresh, fields[i].name).empty()) {
        cache::appendStoredField(out, fields[i].name, fields[i].value);
      }
    }
  }
  for (const HeaderField& h : fresh) {
    if (equalsIgnoreCase(h.name, "age") || equalsIgnoreCase(h.name, "content-length")) continue;
    cache::appendStoredField(out, h.name, h.value);
  }
  return out;
}

}  // namespace

CacheExchange& CacheExchanges::take() {
  return exchanges_.take(*this);
}

CacheExchange::CacheExchange(CacheExchanges& home) : home_(home) {
  out_headers_.reserve(32);
}

void CacheExchange::start(Request& request, ResponseWriter& client, const CachedRoute& route) {
  request_ = &request;
  client_ = &client;
  route_ = &route;
  upstream_ = nullptr;
  collapsed_ = false;
  relooks_ = 0;
  stale_allowed_ = false;
  have_hit_ = storing_ = false;
  status_ = CacheStatus{};
  miss_kind_ = CacheStatus::Forward::kUriMiss;
  client.setInFlight(this);
  store_ = route.cache->store();
  if (store_ == nullptr) {
    status_.fwd = CacheStatus::Forward::kBypass;
    forward(Mode::kPass);
    return;
  }
  facts_ = cache::requestFacts(request);
  if (request.method != Method::kGet && request.method != Method::kHead) {
    status_.fwd = CacheStatus::Forward::kMethod;
    forward(cache::isSafeMethod(request.method) ? Mode::kPass : Mode::kInvalidate);
    return;
  }
  key_.clear();
  cache::appendPrimaryKey(route.config.key, request, key_);
  uri_.clear();
  cache::appendRequestUri(request, uri_);
  key_hash_ = cache::hash64(key_);
  uri_hash_ = cache::hash64(uri_);
  int64_t now = cache::monotonicMs();
  if (request.loop->local<cache::CacheLoop>().sweepDue(now))
    store_->sweep(now, route.config.inactive);
  wait_until_ms_ = now + static_cast<int64_t>(route.config.lock_timeout);
  lookup();
}

void CacheExchange::lookup() {
  dropHit();
  RequestVary vary(*request_);
  MemoryStore::LookupResult r =
      store_->lookup(key_hash_, key_, vary, kCopyLimit, cache::monotonicMs(), hit_);
  ready_seen_ = r.ready_seen;
  cache::AreaHeader& counters = store_->header();
  if (r.found == MemoryStore::Found::kHit) {
    have_hit_ = true;
    int64_t now = cache::wallClockMs();
    switch (cache::decideReuse(hit_.view.info.freshness, facts_.cache_control, now)) {
      case cache::Reuse::kFresh: {
        CacheStatus s;
        s.hit = true;
        s.collapsed = collapsed_;
        if (collapsed_) s.fwd = miss_kind_;
        counters.hits.fetch_add(1, std::memory_order_relaxed);
        home_.loop().counters().proxy_cache_hits.add();
        answerFromHit(s);
        return;
      }
      case cache::Reuse::kStaleWhileRevalidate: {
        // RFC 5861 §3: served stale while it is revalidated. The request that takes the
        // fill lock does the revalidation (it waits for the upstream, so no request
        // outlives its client); every other one meanwhile gets the stale entry at once.
        miss_kind_ = CacheStatus::Forward::kStale;
        if (!request_->isHead() && !facts_.cache_control.no_store &&
            store_->beginFill(key_hash_, uri_hash_, cache::monotonicMs(), fill_, ready_seen_)) {
          status_.fwd = miss_kind_;
          stale_allowed_ = true;  // the upstream failing: the stale entry still answers
          store_->header().misses.fetch_add(1, std::memory_order_relaxed);
          home_.loop().counters().proxy_cache_misses.add();
          forward(Mode::kRevalidate);
          return;
        }
        CacheStatus s;
        s.hit = true;
        s.detail = "stale-while-revalidate";
        counters.stale_served.fetch_add(1, std::memory_order_relaxed);
        home_.loop().counters().proxy_cache_stale.add();
        answerFromHit(s);
        return;
      }
      case cache::Reuse::kRevalidate:
        miss_kind_ = CacheStatus::Forward::kStale;
        break;
    }
  } else if (r.found == MemoryStore::Found::kVaryMiss) {
    miss_kind_ = CacheStatus::Forward::kVaryMiss;
  }
  // RFC 9111 §5.2.1.7: nothing usable stored, and the client wants nothing else.
  if (facts_.cache_control.only_if_cached) {
    Request& request = *request_;
    ResponseWriter& client = *client_;
    done();
    sendError(request, client, 504);
    return;
  }
  status_.fwd = miss_kind_;
  if (request_->isHead() || facts_.cache_control.no_store) {
    forward(Mode::kPass);  // HEAD answers are not stored; no-store asks us not to
    return;
  }
  if (r.filling) {
    collapsed_ = true;
  }
  tryFill();
}

void CacheExchange::tryFill() {
  int64_t now = cache::monotonicMs();
  if (!store_->beginFill(key_hash_, uri_hash_, now, fill_, ready_seen_)) {
    // The fill we saw under way was published between lookup() and beginFill(): it is
    // the answer. Bounded, so entries of a colliding hash that keep changing cannot hold
    // a request here.
    if (fill_.entry_changed && relooks_++ < kMaxRelooks) {
      lookup();
      return;
    }
    // Another request (in this process or another) is filling it: wait for its answer.
    collapsed_ = true;
    if (now >= wait_until_ms_) {
      status_.collapsed = false;
      forward(Mode::kPass);  // waited long enough: asked for ourselves, not stored
      return;
    }
    state_ = State::kWaiting;
    request_->loop->armTimeout(*this, kWaitPollMs);
    return;
  }
  store_->header().misses.fetch_add(1, std::memory_order_relaxed);
  home_.loop().counters().proxy_cache_misses.add();
  if (!have_hit_ && route_->cache->disk() != nullptr) {
    readDisk();
    return;
  }
  forward(have_hit_ ? Mode::kRevalidate : Mode::kFill);
}

void CacheExchange::onTimeout() noexcept {
  if (state_ != State::kWaiting) return;
  lookup();
}

void CacheExchange::readDisk() {
  state_ = State::kReadingDisk;
  uint64_t ticket = ++ticket_;
  std::shared_ptr<cache::LoopMailbox> mailbox = request_->loop->local<cache::CacheLoop>().mailbox();
  route_->cache->disk()->read(
      key_hash_, key_,
      [mailbox, self = this, ticket](cache::DiskStore::ReadResult result, std::string bytes) {
        mailbox->post([self, ticket, result, b = std::move(bytes)]() mutable {
          self->onDiskRead(ticket, result, std::move(b));
        });
      });
}

void CacheExchange::onDiskRead(uint64_t ticket, cache::DiskStore::ReadResult result,
                               std::string bytes) {
  if (state_ != State::kReadingDisk || ticket != ticket_) return;  // aborted meanwhile
  if (result == cache::DiskStore::ReadResult::kFound) {
    common::Result<cache::EntryView> view = cache::parseEntry(bytes, false);
    RequestVary vary(*request_);
    if (view.ok() && view->key == key_ && vary.matches(view->vary) &&
        store_->reserve(fill_, bytes.size()) &&
        store_->append(fill_, bytes, cache::monotonicMs()) &&
        store_->commit(fill_, uri_hash_, cache::monotonicMs())) {
      lookup();  // a hit now (or stale: then revalidated)
      return;
    }
  }
  forward(Mode::kFill);
}

void CacheExchange::forward(Mode mode) {
  mode_ = mode;
  state_ = State::kForwarding;
  bool fill = mode == Mode::kFill || mode == Mode::kRevalidate;
  if (!fill) dropFill();
  conditional_.clear();
  if (mode == Mode::kRevalidate) {
    // RFC 9111 §4.3.1: the stored validators, so a 304 can refresh the entry.
    std::string_view etag = cache::storedField(hit_.view.head, "etag");
    std::string_view modified = cache::storedField(hit_.view.head, "last-modified");
    if (!etag.empty()) cache::appendStoredField(conditional_, "If-None-Match", etag);
    if (!modified.empty()) cache::appendStoredField(conditional_, "If-Modified-Since", modified);
  }
  request_time_ms_ = cache::wallClockMs();
  UpstreamPools& pools = request_->loop->local<UpstreamPools>();
  UpstreamPool& pool = pools.poolFor(route_->route->upstream);
  // The last thing done here: the exchange may answer (and end us) before it returns.
  pools.takeExchange().start(*request_, *this, pool, *route_->route, fill, conditional_);
}

bool CacheExchange::answerFromHit(CacheStatus status) {
  cache::StoredBody body;
  cache::PinLease* lease = nullptr;
  if (hit_.pin.index != 0) {
    lease = request_->loop->local<cache::CacheLoop>().lease(*store_, hit_.pin);
    hit_.pin = MemoryStore::Pin{};
    body.segments = hit_.segments;
    body.owner = lease;
  } else {
    body.copy = hit_.body;
  }
  store_->header().bytes_served.fetch_add(hit_.view.info.body_len, std::memory_order_relaxed);
  home_.loop().counters().proxy_cache_bytes.add(hit_.view.info.body_len);
  cache::StoredAnswerOptions options;
  options.status = status;
  options.cache_status_header = route_->config.cache_status_header;
  options.now_ms = cache::wallClockMs();
  Request& request = *request_;
  ResponseWriter& client = *client_;
  cache::EntryView view = hit_.view;
  bool swallow = state_ == State::kForwarding;
  if (swallow) {
    // The upstream's answer still comes to us: it is dropped, and we end when it ends.
    state_ = State::kSwallowing;
    client.setInFlight(nullptr);
  } else {
    done();
  }
  // The views stay valid through the call: nothing reuses this object's buffers before
  // the client's finish(), the call's last step.
  cache::sendStoredResponse(request, client, view, body, options);
  if (lease != nullptr) lease->release();
  return true;
}

void CacheExchange::sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept {
  if (state_ == State::kForwarding) client_->sendInterim(status, headers);
}

void CacheExchange::sendHead(const ResponseHead& head) noexcept {
  if (state_ != State::kForwarding) return;
  switch (mode_) {
    case Mode::kInvalidate:
      if (cache::invalidatesOnAnswer(request_->method, head.status)) invalidate(head);
      break;
    case Mode::kPass:
      break;
    case Mode::kRevalidate:
      status_.fwd_status = head.status;
      if (head.status == 304) {
        refreshFrom304(head);
        return;
      }
      [[fallthrough]];
    case Mode::kFill:
      if (cache::isErrorStatus(head.status) && have_hit_ &&
          (stale_allowed_ ||
           cache::staleIfErrorAllows(hit_.view.info.freshness, facts_.cache_control,
                                     route_->config.stale_if_error, cache::wallClockMs()))) {
        answerStale(head.status);
        return;
      }
      beginStoring(head);
      break;
  }
  passHead(head);
}

void CacheExchange::passHead(const ResponseHead& head) {
  out_headers_.assign(head.headers.begin(), head.headers.end());
  char value[cache::kCacheStatusMax];
  if (route_->config.cache_status_header) {
    out_headers_.push_back(HeaderField{
        "Cache-Status", std::string_view(value, cache::renderCacheStatus(status_, value))});
  }
  ResponseHead copy = head;
  copy.headers = out_headers_;
  client_->sendHead(copy);
}

void CacheExchange::beginStoring(const ResponseHead& head) {
  if (fill_.index == 0) return;
  cache::ResponseTiming timing{request_time_ms_, cache::wallClockMs()};
  cache::StorePlan plan =
      cache::planStore(route_->config, facts_, head.status, head.headers, timing);
  uint64_t max_entry = route_->config.max_entry;
  if (!plan.store || (head.content_length && *head.content_length > max_entry)) {
    dropFill();
    return;
  }
  std::string stored_head;
  for (const HeaderField& h : head.headers) {
    if (equalsIgnoreCase(h.name, "age")) continue;  // ours is computed on every answer
    if (plan.strip_set_cookie && equalsIgnoreCase(h.name, "set-cookie")) continue;
    if (cache::fieldListNames(plan.private_fields, h.name) ||
        cache::fieldListNames(plan.no_cache_fields, h.name)) {
      continue;
    }
    cache::appendStoredField(stored_head, h.name, h.value);
  }
  bool star = false;
  std::string names = cache::varyFieldNames(head.headers, star);
  std::string vary;
  cache::appendSecondaryKey(names, *request_, vary);
  cache::EntryInfo info;
  info.status = head.status;
  info.freshness = plan.freshness;
  info.key_hash = key_hash_;
  info.body_len = head.content_length.value_or(0);
  meta_.assign(cache::entryMetaSize(key_, uri_, vary, stored_head), '\0');
  cache::writeEntryMeta(info, key_, uri_, vary, stored_head, meta_.data());
  if (!store_->reserve(fill_, meta_.size() + info.body_len) ||
      !store_->append(fill_, meta_, cache::monotonicMs())) {
    dropFill();
    return;
  }
  storing_ = true;
  stored_body_ = 0;
  if (route_->cache->disk() != nullptr) disk_copy_ = meta_;
  status_.stored = true;
}

void CacheExchange::sendBody(std::string_view data, BodyLifetime lifetime) noexcept {
  if (state_ != State::kForwarding) return;
  if (storing_) {
    stored_body_ += data.size();
    if (stored_body_ > route_->config.max_entry ||
        !store_->append(fill_, data, cache::monotonicMs())) {
      dropFill();  // too large after all (or no room): it goes through unstored
    } else if (!disk_copy_.empty()) {
      disk_copy_.append(data);
    }
  }
  client_->sendBody(data, lifetime);
}

void CacheExchange::sendFile(const FileSlice& file) noexcept {
  if (state_ != State::kForwarding) return;
  dropFill();  // the proxy streams bytes, never files; nothing to store from a file here
  client_->sendFile(file);
}

void CacheExchange::finish() noexcept {
  if (state_ == State::kSwallowing) {
    done();
    return;
  }
  if (state_ != State::kForwarding) return;
  if (storing_) publish();
  ResponseWriter* client = client_;
  done();
  client->finish();
}

void CacheExchange::publish() {
  storing_ = false;
  cache::setEntryBodyLength(meta_.data(), stored_body_);
  if (!store_->overwrite(fill_, 0, std::string_view(meta_).substr(0, cache::kEntryHeaderSize)) ||
      !store_->commit(fill_, uri_hash_, cache::monotonicMs())) {
    dropFill();
    return;
  }
  cache::DiskWorker* disk = route_->cache->disk();
  if (disk != nullptr && disk_copy_.size() == meta_.size() + stored_body_) {
    std::memcpy(disk_copy_.data(), meta_.data(), cache::kEntryHeaderSize);
    std::string_view body[] = {std::string_view(disk_copy_).substr(meta_.size())};
    cache::setEntryChecksum(
        disk_copy_.data(),
        cache::entryChecksum(std::string_view(disk_copy_).substr(0, meta_.size()), body));
    disk->write(key_hash_, std::move(disk_copy_));
  }
  disk_copy_.clear();
}

void CacheExchange::refreshFrom304(const ResponseHead& head) {
  store_->header().revalidations.fetch_add(1, std::memory_order_relaxed);
  home_.loop().counters().proxy_cache_revalidations.add();
  std::string merged = mergedHead(hit_.view.head, head.headers);
  HeaderField fields[cache::kMaxStoredFields];
  size_t count = 0;
  cache::EntryInfo info = hit_.view.info;
  if (cache::splitStoredHead(merged, fields, count)) {
    cache::ResponseTiming timing{request_time_ms_, cache::wallClockMs()};
    info.freshness = cache::refreshedFreshness(route_->config, info.status,
                                               std::span<const HeaderField>(fields, count), timing);
  }
  std::string meta(cache::entryMetaSize(hit_.view.key, hit_.view.uri, hit_.view.vary, merged),
                   '\0');
  cache::writeEntryMeta(info, hit_.view.key, hit_.view.uri, hit_.view.vary, merged, meta.data());
  // The refreshed entry: the new head and the stored body, published in one step.
  bool stored = fill_.index != 0 && store_->reserve(fill_, meta.size() + info.body_len) &&
                store_->append(fill_, meta, cache::monotonicMs());
  if (stored && hit_.pin.index == 0) {
    stored = store_->append(fill_, hit_.body, cache::monotonicMs());
  } else {
    for (std::string_view segment : hit_.segments) {
      stored = stored && store_->append(fill_, segment, cache::monotonicMs());
    }
  }
  if (stored) {
    store_->commit(fill_, uri_hash_, cache::monotonicMs());
  } else {
    dropFill();
  }
  hit_.meta = std::move(meta);
  common::Result<cache::EntryView> view = cache::parseEntryMeta(hit_.meta);
  if (view.ok()) hit_.view = *view;
  CacheStatus s;
  s.fwd = CacheStatus::Forward::kStale;
  s.fwd_status = 304;
  answerFromHit(s);
}

void CacheExchange::answerStale(uint16_t upstream_status) {
  store_->header().stale_served.fetch_add(1, std::memory_order_relaxed);
  home_.loop().counters().proxy_cache_stale.add();
  dropFill();
  LOG_NOTICE("cache %s: %s: upstream answered %u; serving the stored answer (stale-if-error)",
             route_->config.name.c_str(), uri_.c_str(), upstream_status);
  CacheStatus s;
  s.fwd = CacheStatus::Forward::kStale;
  s.fwd_status = upstream_status;
  s.detail = "stale-if-error";
  answerFromHit(s);
}

void CacheExchange::invalidate(const ResponseHead& head) {
  std::vector<std::string> uris = cache::invalidatedUris(
      *request_, fieldOf(head.headers, "location"), fieldOf(head.headers, "content-location"));
  for (const std::string& uri : uris) store_->removeUri(cache::hash64(uri), uri);
  if (cache::DiskWorker* disk = route_->cache->disk()) {
    std::string key;
    cache::appendPrimaryKey(route_->config.key, *request_, key);
    disk->remove(cache::hash64(key));
    // Location and Content-Location: the file a GET of each would find. With header or
    // cookie parts in the key no URI names a file; those copies stay until they expire or
    // are purged (RFC 9111 §4.4 asks this only as a SHOULD).
    for (size_t i = 1; i < uris.size(); ++i) {
      key.clear();
      if (cache::primaryKeyOfUri(route_->config.key, uris[i], key))
        disk->remove(cache::hash64(key));
    }
  }
}

size_t CacheExchange::queuedBytes() const noexcept {
  return state_ == State::kForwarding ? client_->queuedBytes() : 0;
}

void CacheExchange::notifyWhenWritable(WritableObserver* observer) noexcept {
  if (state_ == State::kForwarding) client_->notifyWhenWritable(observer);
}

void CacheExchange::setBodyReadPaused(bool paused) noexcept {
  if (state_ == State::kForwarding) client_->setBodyReadPaused(paused);
}

void CacheExchange::abortResponse() noexcept {
  dropFill();  // a cut answer is never stored
  if (state_ == State::kSwallowing) {
    done();
    return;
  }
  if (state_ != State::kForwarding) return;
  ResponseWriter* client = client_;
  done();
  client->abortResponse();
}

void CacheExchange::abort() noexcept {
  if (state_ == State::kFree) return;
  InFlight* upstream = state_ == State::kForwarding ? upstream_ : nullptr;
  done();
  if (upstream != nullptr) upstream->abort();
}

void CacheExchange::dropFill() {
  storing_ = false;
  disk_copy_.clear();
  if (fill_.index != 0 && store_ != nullptr) store_->abandon(fill_);
}

void CacheExchange::dropHit() {
  if (hit_.pin.index != 0 && store_ != nullptr) store_->unpin(hit_.pin);
  hit_.pin = MemoryStore::Pin{};
  have_hit_ = false;
}

void CacheExchange::done() {
  dropFill();
  dropHit();
  if (request_ != nullptr) request_->loop->disarmTimeout(*this);
  ++ticket_;
  state_ = State::kFree;
  request_ = nullptr;
  client_ = nullptr;
  upstream_ = nullptr;
  home_.recycle(*this);
}

}  // namespace scalws::worker::proxy
