// A proxy request on a route with a cache (proxy = { cache = "NAME" }): answered from the
// cache when it can be, else forwarded through a ProxyExchange whose answer passes through
// this object on its way to the client — stored as it streams, refreshing a stale entry
// on a 304, or replaced by a stale entry when the upstream fails (stale-if-error).
//
//   start ─► lookup ──fresh hit──────────────────────────────► answered from the entry
//              │ ──stale, stale-while-revalidate allows──────► answered from the entry
//              │      (unless this request takes the fill lock: it revalidates, below)
//              │ ──miss / stale──► fill lock taken? ─no─► kWaiting (another process or
//              │                      │ yes                  loop fills it: lookup again
//              │                      ▼                      every few ms, up to
//              │           disk tier has it? ─yes─► stored,   lock_timeout, then forward
//              │                      │ no        answered    without storing)
//              │                      ▼
//              └─unsafe method / HEAD / bypass──► kForwarding (ProxyExchange, writer = this)
//
// As the ResponseWriter of the ProxyExchange it sees the upstream's head first: a
// storable answer (cache_policy.h) is written into the fill (stored_entry.h layout) while
// it goes to the client, and published at finish(); one over max_entry goes through
// unstored. An unsafe method's non-error answer invalidates the request's URI and its
// Location/Content-Location of the same host. Every answer carries Cache-Status when the
// cache says so.
//
// Lifetime: pooled per loop (CacheExchanges); it is the client writer's InFlight from
// start() until it hands the client its last call, and never touches itself after that
// call (finish() may start the next request on the connection, which may take this very
// object from the pool).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "common/config/cache_config.h"
#include "common/object_pool.h"
#include "worker/handlers/cache/cache_policy.h"
#include "worker/handlers/cache/cache_status.h"
#include "worker/handlers/cache/disk_store.h"
#include "worker/handlers/cache/memory_store.h"
#include "worker/handlers/cache/shared_cache.h"
#include "worker/handlers/cache/stored_entry.h"
#include "worker/handlers/proxy/proxy_route.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/loop_local.h"
#include "worker/loop/timeout_queue.h"

namespace scalws::worker::proxy {

class CacheExchanges;

// What a cached proxy route knows of its cache.
struct CachedRoute {
  const ProxyRoute* route = nullptr;
  std::shared_ptr<cache::SharedCache> cache;
  common::config::CacheConfig config;  // the snapshot's (the SharedCache may be older)
};

class CacheExchange final : public ResponseWriter, public InFlight, private TimeoutEntry {
 public:
  explicit CacheExchange(CacheExchanges& home);

  void start(Request& request, ResponseWriter& client, const CachedRoute& route);

  // ResponseWriter: what the ProxyExchange answers through.
  void sendHead(const ResponseHead& head) noexcept override;
  // Passed to the client, never stored.
  void sendInterim(uint16_t status, std::span<const HeaderField> headers) noexcept override;
  void sendBody(std::string_view data, BodyLifetime lifetime) noexcept override;
  void sendFile(const FileSlice& file) noexcept override;
  void finish() noexcept override;
  size_t queuedBytes() const noexcept override;
  void notifyWhenWritable(WritableObserver* observer) noexcept override;
  void setInFlight(InFlight* in_flight) noexcept override { upstream_ = in_flight; }
  void setBodyReadPaused(bool paused) noexcept override;
  void abortResponse() noexcept override;

  // InFlight: the client went away.
  void abort() noexcept override;

 private:
  enum class State { kFree, kWaiting, kReadingDisk, kForwarding, kSwallowing };
  // What the forwarded answer is for.
  enum class Mode { kPass, kFill, kRevalidate, kInvalidate };

  void onTimeout() noexcept override;
  void lookup();
  bool answerFromHit(cache::CacheStatus status);
  void tryFill();
  void readDisk();
  void onDiskRead(uint64_t ticket, cache::DiskStore::ReadResult result, std::string bytes);
  void forward(Mode mode);
  void beginStoring(const ResponseHead& head);
  void refreshFrom304(const ResponseHead& head);
  void answerStale(uint16_t upstream_status);
  void publish();
  void dropFill();
  void dropHit();
  void invalidate(const ResponseHead& head);
  void passHead(const ResponseHead& head);
  // Ends our part: back to the pool, then `last` (the client's finish/abort) if given.
  void done();

  CacheExchanges& home_;
  State state_ = State::kFree;
  Mode mode_ = Mode::kPass;
  Request* request_ = nullptr;
  ResponseWriter* client_ = nullptr;
  const CachedRoute* route_ = nullptr;
  cache::MemoryStore* store_ = nullptr;
  InFlight* upstream_ = nullptr;  // the ProxyExchange, while forwarding
  uint64_t ticket_ = 0;           // tells this request's disk result from a late one
  cache::RequestFacts facts_;
  std::string key_;
  std::string uri_;
  uint64_t key_hash_ = 0;
  uint64_t uri_hash_ = 0;
  int64_t wait_until_ms_ = 0;
  uint32_t ready_seen_ = 0;  // the last lookup's LookupResult::ready_seen
  uint32_t relooks_ = 0;     // lookups again because an entry appeared before beginFill
  bool collapsed_ = false;
  bool stale_allowed_ = false;  // revalidating within stale-while-revalidate
  cache::CacheStatus::Forward miss_kind_ = cache::CacheStatus::Forward::kUriMiss;

  // The entry found (a stale one kept for a 304 or stale-if-error); hit_.view is its meta
  // as the lookup parsed it.
  cache::MemoryStore::Hit hit_;
  bool have_hit_ = false;
  std::string conditional_;

  // The fill.
  cache::MemoryStore::Fill fill_;
  bool storing_ = false;
  uint64_t stored_body_ = 0;
  std::string meta_;
  std::string disk_copy_;  // the whole entry, for the disk tier
  int64_t request_time_ms_ = 0;
  cache::CacheStatus status_;
  std::vector<HeaderField> out_headers_;
};

// The loop's pool of CacheExchanges.
class CacheExchanges final : public LoopLocal {
 public:
  explicit CacheExchanges(WorkerLoop& loop) : loop_(loop) {}
  WorkerLoop& loop() { return loop_; }
  CacheExchange& take();
  void recycle(CacheExchange& exchange) { exchanges_.give(exchange); }

 private:
  WorkerLoop& loop_;
  common::ObjectPool<CacheExchange> exchanges_;
};

}  // namespace scalws::worker::proxy
