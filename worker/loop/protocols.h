// How a loop starts the connection of an application protocol without knowing its type:
// a small table of starters, one per protocol, that the protocols' folders provide
// (worker/protocols.cpp fills the built-in one). The loop and the TLS/h2c sniffer only
// name an AppProtocol; HTTP/3, which has datagrams instead of accepted connections, is
// the table's one datagram starter, handed each UDP socket of an HTTP/3 listener.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

namespace scalws::worker {

class ClientConnection;
class Transport;
class WorkerLoop;
struct ListenerSocket;
struct PeerInfo;

enum class AppProtocol { kHttp1, kHttp2 };

// Makes and starts a connection on `transport`; null when it cannot start (the object is
// gone then, and the caller closes the fd, which transports never close themselves).
using ConnectionStarter = ClientConnection* (*)(WorkerLoop& loop,
                                                std::unique_ptr<Transport> transport,
                                                const PeerInfo& peer);

// Starts serving a bound UDP socket on the loop (its connections register with the loop as
// they come); false when it cannot.
using DatagramStarter = bool (*)(WorkerLoop& loop, const ListenerSocket& socket);
// A datagram a shared address's front passed on for the HTTP/3 listener of
// listens[listen_index] (ipc/forwarded_datagram.h); false when the loop has none. The
// connections it reaches write once the run of them ends (ForwardedRunEnd), as after one
// batch read from a socket.
using DatagramForwarder = bool (*)(WorkerLoop& loop, int listen_index,
                                   std::span<const uint8_t> message);
using ForwardedRunEnd = void (*)(WorkerLoop& loop);

struct ProtocolTable {
  ConnectionStarter http1 = nullptr;
  ConnectionStarter http2 = nullptr;
  DatagramStarter http3 = nullptr;  // null in a build without HTTP/3
  DatagramForwarder http3_forwarded = nullptr;
  ForwardedRunEnd http3_forwarded_end = nullptr;

  ConnectionStarter starter(AppProtocol protocol) const {
    return protocol == AppProtocol::kHttp2 ? http2 : http1;
  }
};

// HTTP/1.1, HTTP/2 and, when built, HTTP/3 (worker/protocols.cpp).
const ProtocolTable& builtinProtocols();

}  // namespace scalws::worker
