// A WebSocket (or other upgraded) connection through the proxy once the upstream said 101:
// bytes both ways, unchanged, between the client's tunnelled exchange (response_writer.h)
// and the upstream connection, with back-pressure both ways and an idle timeout.
//
// Ends: the client stops sending → the upstream's sending half is shut (FIN, or TLS
// close_notify) and the tunnel waits for the upstream to finish; the upstream stops
// sending → the client's side is finished and the upstream connection closed; the client
// goes away (abort) or nothing moves either way for `idle_ms` → both are closed at once.
//
// Lifetime: owned and recycled by UpstreamPools; from start() until it ended it is the
// writer's InFlight, the request's BodySink and the connection's user. The connection is
// never reused after a tunnel: it is closed.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "worker/handlers/proxy/upstream_connection.h"
#include "worker/http/request.h"
#include "worker/http/response_writer.h"
#include "worker/loop/timeout_queue.h"

namespace scalws::worker::proxy {

class UpstreamPools;
class UpstreamPool;

class Tunnel final : public InFlight,
                     public BodySink,
                     public WritableObserver,
                     public UpstreamConnectionUser,
                     private TimeoutEntry {
 public:
  static constexpr size_t kHighWater = 256 * 1024;

  explicit Tunnel(UpstreamPools& pools);
  ~Tunnel();
  Tunnel(const Tunnel&) = delete;
  Tunnel& operator=(const Tunnel&) = delete;

  // Takes over after the 101 reached the writer. `from_upstream`: bytes the upstream sent
  // behind its 101; `to_upstream`: client bytes that arrived before the switch.
  void start(UpstreamPool& pool, UpstreamConnection& connection, Request& request,
             ResponseWriter& writer, std::string_view from_upstream, std::string_view to_upstream,
             uint64_t idle_ms);

  // InFlight
  void abort() noexcept override;
  // BodySink: the client's bytes.
  void onBodyData(std::string_view data) noexcept override;
  void onBodyEnd() noexcept override;
  // WritableObserver: the client drained what we sent it.
  void onWritable() noexcept override;
  // UpstreamConnectionUser
  void onUpstreamConnected() noexcept override {}
  void onUpstreamConnectFailed(int) noexcept override {}
  void onUpstreamEvent(int status, int events) noexcept override;

 private:
  enum class State {
    kFree,
    kOpen,        // bytes both ways
    kClientDone,  // the client stopped sending; the upstream may still talk
  };

  void onTimeout() noexcept override;
  bool flushUp();
  void readUp();
  void toClient(std::string_view data);
  void updateWatch();
  void end(bool cleanly, const char* why);
  void teardown();

  UpstreamPools& pools_;
  State state_ = State::kFree;
  UpstreamPool* pool_ = nullptr;
  UpstreamConnection* conn_ = nullptr;
  Request* request_ = nullptr;
  ResponseWriter* writer_ = nullptr;
  uint64_t idle_ms_ = 0;
  std::string up_;  // client bytes not yet taken by the upstream socket
  size_t up_pos_ = 0;
  bool up_shut_ = false;  // our sending half to the upstream is shut
  bool body_paused_ = false;
  bool client_paused_ = false;  // the client is behind: the upstream is not read
  bool calling_writer_ = false;
  bool aborted_ = false;
  std::unique_ptr<char[]> read_buf_;
};

}  // namespace scalws::worker::proxy
