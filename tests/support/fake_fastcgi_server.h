// A FastCGI application for tests: it listens on a unix socket (or 127.0.0.1, port 0) on
// the caller's libuv loop, decodes what a FastCGI client sends (BEGIN_REQUEST, PARAMS,
// STDIN, ABORT_REQUEST) with its own decoder, independent of the worker's encoder, and
// answers what the test tells it to. The waitFor*() calls run the loop until what they wait
// for has arrived or a timeout passed, so a test reads top to bottom:
//
//   FakeFastcgiServer fpm(uv);
//   ... point a pool at fpm.address() and start a request ...
//   FakeFastcgiServer::Request* req = fpm.waitForRequest();
//   EXPECT_EQ(req->param("REQUEST_METHOD"), "GET");
//   fpm.respond(*req, "Status: 200 OK\r\nContent-Type: text/plain\r\n\r\nhello");
//
// Single-threaded: everything happens on the loop's thread, inside waitFor*()/runUntil()
// or whatever else runs the loop. Requests live as long as the server; their fields fill in
// as bytes arrive. Writes are queued and flushed as the socket takes them.
#pragma once

#include <uv.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace scalws::testing {

class FakeFastcgiServer {
 public:
  enum class Transport { kUnix, kTcp };

  struct Request {
    size_t connection = 0;  // accept order, from 0
    uint16_t id = 0;
    uint16_t role = 0;
    bool keep_conn = false;
    std::map<std::string, std::string> params;
    bool params_complete = false;
    std::string stdin_data;
    bool stdin_complete = false;
    bool aborted = false;  // ABORT_REQUEST received
    // "" when absent.
    std::string param(const std::string& name) const;
  };

  explicit FakeFastcgiServer(uv_loop_t* loop, Transport transport = Transport::kUnix);
  ~FakeFastcgiServer();
  FakeFastcgiServer(const FakeFastcgiServer&) = delete;
  FakeFastcgiServer& operator=(const FakeFastcgiServer&) = delete;

  // For a php_pool address: "unix:/tmp/.../fpm.sock" or "tcp:127.0.0.1:PORT".
  std::string address() const;
  const std::string& unixPath() const { return unix_path_; }
  uint16_t port() const { return port_; }

  // Runs the loop until `done` holds or `timeout_ms` passed; returns `done()`.
  bool runUntil(const std::function<bool()>& done, uint64_t timeout_ms = 2000);
  // The next request not returned before, once its PARAMS are complete and, with
  // `whole_body`, its STDIN too. Null on timeout.
  Request* waitForRequest(uint64_t timeout_ms = 2000, bool whole_body = true);
  // Runs the loop until the connection of `request` was closed by the client.
  bool waitForClose(const Request& request, uint64_t timeout_ms = 2000);

  // The usual answer: `stdout_data` (CGI head and body) as STDOUT records, the empty record
  // ending it, END_REQUEST (app status 0, REQUEST_COMPLETE); then, unless the client asked
  // for FCGI_KEEP_CONN, the connection is closed.
  void respond(const Request& request, std::string_view stdout_data,
               std::string_view stderr_data = {});
  // The parts of an answer, for tests that stream or misbehave.
  void sendStdout(const Request& request, std::string_view data);
  void sendStderr(const Request& request, std::string_view data);
  void endRequest(const Request& request, uint32_t app_status = 0, uint8_t protocol_status = 0);
  void sendRaw(const Request& request, std::string_view bytes);
  void closeConnection(const Request& request);

  // While false the server reads nothing more from its connections (a busy PHP: the
  // client's STDIN backs up in the socket buffers).
  void setReading(bool reading);
  size_t connectionsAccepted() const { return connections_.size(); }
  size_t openConnections() const;
  const std::vector<std::unique_ptr<Request>>& requests() const { return requests_; }

 private:
  struct Connection;
  static void onListen(uv_poll_t* handle, int status, int events);
  static void onConnection(uv_poll_t* handle, int status, int events);
  static void onTimer(uv_timer_t* timer);
  void accept();
  void readFrom(Connection& c);
  void flush(Connection& c);
  void parse(Connection& c);
  void record(Connection& c, uint8_t type, uint16_t id, std::string_view content);
  void queue(const Request& request, std::string bytes);
  void updatePoll(Connection& c);
  void close(Connection& c);

  uv_loop_t* loop_;
  int listen_fd_ = -1;
  std::string dir_;
  std::string unix_path_;
  uint16_t port_ = 0;
  uv_poll_t* listen_poll_ = nullptr;
  uv_timer_t* timer_ = nullptr;
  bool timed_out_ = false;
  bool reading_ = true;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::vector<std::unique_ptr<Request>> requests_;
  size_t next_returned_ = 0;
};

}  // namespace scalws::testing
