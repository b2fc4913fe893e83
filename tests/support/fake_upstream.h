// An HTTP/1.1 upstream for unit tests: bound to 127.0.0.1 on a free port (port 0), it
// accepts connections on its own thread and collects every complete request (head, then a
// Content-Length or chunked body, kept exactly as received). The test takes requests with
// waitForRequest() and answers with respond(), whatever bytes it wants — valid or not — on
// the connection the request came on.
//
// Threading: the accept/read thread is internal; every public method may be called from
// the test's thread. Connections stay open until closed by the peer, closeConnection() or
// the destructor.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace scalws::testing {

class FakeUpstream {
 public:
  struct Received {
    int connection = 0;  // 1, 2, ... in accept order
    std::string head;    // request line and fields, through the empty line
    std::string body;    // as framed on the wire (chunked stays chunked)
    std::string raw() const { return head + body; }
    // The first field of that name (case-insensitive), or nullopt.
    std::optional<std::string> header(const std::string& name) const;
    std::string requestLine() const { return head.substr(0, head.find("\r\n")); }
  };

  FakeUpstream();
  ~FakeUpstream();
  FakeUpstream(const FakeUpstream&) = delete;
  FakeUpstream& operator=(const FakeUpstream&) = delete;

  uint16_t port() const { return port_; }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

  // The next complete request, waiting up to `timeout`; nullopt when none came.
  std::optional<Received> waitForRequest(
      std::chrono::milliseconds timeout = std::chrono::milliseconds(5000));
  // Requests received and not taken yet.
  size_t pendingRequests() const;
  // Sends `bytes` on connection `connection` (a Received::connection).
  void respond(int connection, const std::string& bytes);
  void closeConnection(int connection);
  // Closes the listener: new connects are refused.
  void stopListening();
  int connectionsAccepted() const;
  // Bytes received on `connection` after its last complete request (a tunnel's bytes, or
  // the start of a request still arriving).
  std::string unparsed(int connection) const;
  // True once the peer closed (or shut the sending half of) `connection`.
  bool peerClosed(int connection) const;
  // Connections the peer closed.
  int connectionsClosedByPeer() const;

 private:
  struct Conn {
    int fd = -1;
    std::string buffer;
  };
  void run();
  void parse(int id, Conn& c);

  int listen_fd_ = -1;
  int wake_[2] = {-1, -1};
  uint16_t port_ = 0;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::condition_variable arrived_;
  std::deque<Received> requests_;
  std::map<int, Conn> conns_;
  std::map<int, std::string> final_buffers_;  // what closed connections left unparsed
  int accepted_ = 0;
  int closed_by_peer_ = 0;
  bool stop_ = false;
};

}  // namespace scalws::testing
