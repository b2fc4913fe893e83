// How a loop starts the connection of an application protocol without knowing its type:
// a small table of starters, one per protocol, that the protocols' folders provide
// (worker/protocols.cpp fills the built-in one). The loop and the TLS/h2c sniffer only
// name an AppProtocol; adding a protocol (HTTP/3) touches the table, not the loop.
#pragma once

#include <memory>

namespace scalws::worker {

class ClientConnection;
class Transport;
class WorkerLoop;
struct PeerInfo;

enum class AppProtocol { kHttp1, kHttp2 };

// Makes and starts a connection on `transport`; null when it cannot start (the object is
// gone then, and the caller closes the fd, which transports never close themselves).
using ConnectionStarter = ClientConnection* (*)(WorkerLoop& loop,
                                                std::unique_ptr<Transport> transport,
                                                const PeerInfo& peer);

struct ProtocolTable {
  ConnectionStarter http1 = nullptr;
  ConnectionStarter http2 = nullptr;

  ConnectionStarter starter(AppProtocol protocol) const {
    return protocol == AppProtocol::kHttp2 ? http2 : http1;
  }
};

// HTTP/1.1 and HTTP/2 (worker/protocols.cpp).
const ProtocolTable& builtinProtocols();

}  // namespace scalws::worker
