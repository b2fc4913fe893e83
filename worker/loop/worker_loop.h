// One event loop and everything it owns (nothing shared between loops on the request
// path): its listeners, connections, timeouts, buffers, date cache, access-log buffer and
// the config snapshot new connections start on. Handlers keep their per-loop state (open
// files, pool connections) in LoopLocals the loop holds without knowing their kinds.
//
// Threading: every method runs on the loop's thread except postSnapshot() and
// postShutdown(), which any thread may call (they wake the loop through a uv_async).
#pragma once

#include <sys/socket.h>
#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/http_date.h"
#include "common/net/quic_route.h"
#include "worker/access_log.h"
#include "worker/loop/loop_local.h"
#include "worker/loop/protocols.h"
#include "worker/loop/socket_poller.h"
#include "worker/loop/timeout_queue.h"
#include "worker/metrics/loop_counters.h"
#include "worker/metrics/metrics_area.h"
#include "worker/metrics/process_stats.h"
#include "worker/net/buffer_pool.h"
#include "worker/net/codec_memory.h"

namespace scalws::worker {

class ClientConnection;
class ConfigSnapshot;
class SharedHosts;
class Transport;
struct PeerInfo;

// Where a loop counts: its slot of the site's MetricsArea, and for one loop per
// process the process's CPU/RSS to refresh into it.
struct LoopMetricsSetup {
  MetricsArea* area = nullptr;  // null: counters private to the loop
  size_t slot = 0;
  const ProcessStats* process = nullptr;
};

struct ListenerSocket {
  int fd = -1;
  uint16_t port = 0;
  bool tls = false;
  int listen_index = -1;  // into the snapshot's site().listens; -1: plain HTTP/1.1
  // A UDP socket serving HTTP/3 for listens[listen_index]; `steering_id` is its index in
  // the port's reuseport group, which the connection IDs it issues carry
  // (quic/connection_id.h, common/net/quic_steering.h).
  bool quic = false;
  uint16_t steering_id = 0xffff;
  // A UDP socket of a shared address: it only sends; the address's front passes the
  // datagrams on through the listener's hand-off channel, by `quic_route`, which the IDs
  // this loop issues start with (common/net/quic_route.h).
  bool front_routed = false;
  common::net::QuicRoute quic_route{};
  // A channel of a shared address instead of a listening socket: a SOCK_SEQPACKET unix
  // socket on which the address's front sends accepted connections, one descriptor per
  // message (ipc/front_messages.h). They are served exactly like accepted ones, with
  // `shared_hosts` in their PeerInfo.
  bool handoff = false;
  std::shared_ptr<const SharedHosts> shared_hosts = {};
  // A channel of an HTTP/3 address: the front passes QUIC datagrams on it too.
  bool carries_datagrams = false;
};

class WorkerLoop {
 public:
  // `uv` must outlive this object; `index` tells loops of one process apart in ids.
  WorkerLoop(uv_loop_t* uv, uint32_t index, std::shared_ptr<const ConfigSnapshot> snapshot,
             int access_log_fd, LoopMetricsSetup metrics = {});
  ~WorkerLoop();
  WorkerLoop(const WorkerLoop&) = delete;
  WorkerLoop& operator=(const WorkerLoop&) = delete;

  // Starts accepting on a bound, listening, non-blocking socket. The fd stays owned by the
  // caller (a supervising parent may hand it to a replacement worker).
  void addListener(const ListenerSocket& listener);
  // Runs until a shutdown completed and the owner closed its own handles on this uv loop;
  // `on_drained` fires on the loop thread once the last connection is gone.
  void run();
  void setOnDrained(std::function<void()> on_drained) { on_drained_ = std::move(on_drained); }

  void postSnapshot(std::shared_ptr<const ConfigSnapshot> snapshot);
  void postShutdown();
  // New names for the channels of the shared address behind listens[listen_index]; the
  // connections handed over from then on use them.
  void postSharedHosts(int listen_index, std::shared_ptr<const SharedHosts> hosts);

  // Services for connections and handlers (loop thread only).
  uv_loop_t* uv() const { return uv_; }
  const std::shared_ptr<const ConfigSnapshot>& snapshot() const { return snapshot_; }
  BufferPool& buffers() { return buffers_; }
  CodecMemory& codecMemory() { return codec_memory_; }
  // Where client connections watch their sockets.
  SocketPoller& poller() { return poller_; }
  common::DateCache& date() { return date_; }
  AccessLog* accessLog() { return access_log_.get(); }
  // This loop's instance of a handler's per-loop state (loop_local.h), made on first use.
  template <class T>
  T& local() {
    return locals_.get<T>(*this);
  }
  uint64_t nextRequestId() { return (++request_counter_ << 8) | index_; }
  // Which turn of the loop this is: it changes right before every wait for events, so
  // what runs under one number ran without blocking in between (the open-file cache's
  // check mode lets one statx serve a turn). Starts at 1.
  uint64_t turn() const { return turn_; }
  void armTimeout(TimeoutEntry& entry, uint64_t duration_ms);
  void disarmTimeout(TimeoutEntry& entry) { timeouts_.disarm(entry); }
  // Starts the protocol's connection on an accepted socket whose protocol is settled
  // (TLS handshake and ALPN done, or h2c preface seen); closes the fd when it cannot.
  bool serveConnection(std::unique_ptr<Transport> transport, const PeerInfo& peer,
                       AppProtocol protocol);
  // The connection classes the loop starts (builtinProtocols() unless a test says so).
  void setProtocolsForTest(const ProtocolTable& protocols) { protocols_ = &protocols; }
  // Connections register once started and unregister from their close callback.
  void addConnection(ClientConnection* connection);
  // `handed_over`: the connection lives on as another object (TLS or h2c sniffing done),
  // so it is not counted as closed.
  void onConnectionClosed(ClientConnection* connection, bool handed_over = false);
  size_t connectionCount() const { return connection_count_; }
  LoopCounters& counters() { return *counters_; }
  // The figures of the whole site this loop belongs to (the status page).
  common::metrics::MetricsSnapshot siteMetrics() const;
  bool shuttingDown() const { return shutting_down_; }
  // Who claims which names on the shared address of listens[listen_index], as its
  // hand-off listener has them now; null when that listener is not on a shared address.
  std::shared_ptr<const SharedHosts> sharedHosts(int listen_index) const;

 private:
  // In the poller's set like the client sockets, so a wake for new connections costs
  // one epoll_wait, not libuv's as well.
  struct Listener {
    WorkerLoop* owner;
    ListenerSocket socket;
    SocketPoller::Watch watch;
  };

  static void onAccept(void* owner, int status, int events);
  static void onTimer(uv_timer_t* timer);
  static void onSecondTimer(uv_timer_t* timer);
  static void onShutdownTimer(uv_timer_t* timer);
  static void onPrepare(uv_prepare_t* prepare);
  static void onAsync(uv_async_t* async);

  void acceptFrom(Listener& listener);
  // A channel's messages: each descriptor a front handed over, and on an HTTP/3 address
  // the QUIC datagrams it passed on (their connections write once the run is read).
  void receiveFrom(Listener& listener);
  // Reads the hand-off channel's messages; true when one was a datagram for HTTP/3.
  bool receiveMessages(Listener& listener);
  // The descriptors of one hand-off message, each admitted once checked.
  void takeHandedOver(Listener& listener, msghdr& message);
  // A connection from `listener` (accepted, or handed over and checked): counted, refused
  // past max_connections, else started.
  void admit(const Listener& listener, int fd, PeerInfo& peer);
  // Chooses the protocol for a new connection and starts it: a TLS handshake first on TLS
  // listeners, a look for the h2c preface on plain ones with http2 = true, else HTTP/1.1;
  // on a listener with proxy_protocol = true, the PROXY header before any of these.
  void startConnection(int fd, const PeerInfo& peer, int listen_index);
  void rejectOverloaded(int fd);
  static void onRejectTimer(uv_timer_t* timer);
  void closeRejected();
  void applySnapshot(std::shared_ptr<const ConfigSnapshot> snapshot);
  void startShutdown();
  void maybeFinishShutdown();
  void scheduleTimer();

  uv_loop_t* uv_;
  uint32_t index_;
  std::shared_ptr<const ConfigSnapshot> snapshot_;
  std::vector<std::unique_ptr<Listener>> listeners_;
  std::unique_ptr<uint8_t[]> channel_buffers_;  // for hand-off channels' messages, when one reads
  ClientConnection* connections_ = nullptr;
  size_t connection_count_ = 0;
  uint64_t request_counter_ = 0;
  uint64_t turn_ = 1;
  uv_prepare_t turn_prepare_{};

  CodecMemory codec_memory_;  // before everything that holds a protocol session
  BufferPool buffers_;
  SocketPoller poller_;
  common::DateCache date_;
  TimeoutQueue timeouts_;
  uv_timer_t timer_{};
  uint64_t timer_deadline_ = UINT64_MAX;
  uv_timer_t second_timer_{};  // access-log flush, process gauges
  uv_timer_t shutdown_timer_{};
  // Connections refused with a 503 (max_connections): closed a moment later, after
  // draining what the client sent, so the 503 is read rather than reset away.
  uv_timer_t reject_timer_{};
  std::vector<int> rejected_;
  std::unique_ptr<AccessLog> access_log_;
  LoopMetricsSetup metrics_;
  std::unique_ptr<LoopCounters> own_counters_;
  LoopCounters* counters_ = nullptr;
  LoopLocals locals_;
  const ProtocolTable* protocols_ = &builtinProtocols();

  uv_async_t async_{};
  std::mutex pending_mutex_;
  std::shared_ptr<const ConfigSnapshot> pending_snapshot_;
  std::vector<std::pair<int, std::shared_ptr<const SharedHosts>>> pending_hosts_;
  bool pending_shutdown_ = false;
  bool shutting_down_ = false;
  bool handles_closed_ = false;
  std::function<void()> on_drained_;
};

}  // namespace scalws::worker
