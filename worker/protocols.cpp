// The built-in protocol table (loop/protocols.h): the one place that knows which
// connection classes serve which protocol.
#include "worker/loop/protocols.h"

#include "worker/http1/connection.h"
#include "worker/http2/connection.h"

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

}  // namespace

const ProtocolTable& builtinProtocols() {
  static const ProtocolTable table{&start<http1::Connection>, &start<http2::Connection>};
  return table;
}

}  // namespace scalws::worker
