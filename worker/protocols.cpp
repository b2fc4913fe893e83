// The built-in protocol table (loop/protocols.h): the one place that knows which
// connection classes serve which protocol.
#include "worker/loop/protocols.h"

#include "worker/http1/connection.h"
#include "worker/http2/connection.h"
#if SCALWS_HTTP3
#include "worker/http3/listener.h"
#endif

namespace scalws::worker {
namespace {

template <class Connection>
ClientConnection* start(WorkerLoop& loop, std::unique_ptr<Transport> transport,
                        const PeerInfo& peer) {
  auto* c = new Connection(loop, std::move(transport), peer);
  if (c->start()) return c;
  delete c;
  return nullptr;
}

#if SCALWS_HTTP3
// HTTP/3's per-loop state (http3::LoopListeners) reads the socket from here on.
bool startHttp3(WorkerLoop& loop, const ListenerSocket& socket) {
  return loop.local<http3::LoopListeners>().add(socket);
}

bool forwardHttp3(WorkerLoop& loop, int listen_index, std::span<const uint8_t> message) {
  return loop.local<http3::LoopListeners>().forward(listen_index, message);
}

void endForwardedHttp3(WorkerLoop& loop) {
  loop.local<http3::LoopListeners>().endForwarded();
}
#endif

}  // namespace

const ProtocolTable& builtinProtocols() {
#if SCALWS_HTTP3
  static const ProtocolTable table{&start<http1::Connection>, &start<http2::Connection>,
                                   &startHttp3, &forwardHttp3, &endForwardedHttp3};
#else
  static const ProtocolTable table{&start<http1::Connection>, &start<http2::Connection>};
#endif
  return table;
}

}  // namespace scalws::worker
