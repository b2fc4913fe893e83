#include "tests/support/fake_fastcgi_server.h"

#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace scalws::testing {
namespace {

// FastCGI 1.0 (the specification's §3.3 and §8), written out again here so that the
// worker's encoder is checked against an independent decoder.
constexpr uint8_t kBeginRequest = 1;
constexpr uint8_t kAbortRequest = 2;
constexpr uint8_t kEndRequest = 3;
constexpr uint8_t kParams = 4;
constexpr uint8_t kStdin = 5;
constexpr uint8_t kStdout = 6;
constexpr uint8_t kStderr = 7;
constexpr size_t kMaxContent = 65535;

std::string header(uint8_t type, uint16_t id, size_t length) {
  return std::string{1,
                     static_cast<char>(type),
                     static_cast<char>(id >> 8),
                     static_cast<char>(id & 0xff),
                     static_cast<char>(length >> 8),
                     static_cast<char>(length & 0xff),
                     0,
                     0};
}

// `type` records carrying `data`, split at 64 KiB; nothing for empty data.
std::string stream(uint8_t type, uint16_t id, std::string_view data) {
  std::string out;
  while (!data.empty()) {
    size_t n = std::min(data.size(), kMaxContent);
    out += header(type, id, n);
    out.append(data.substr(0, n));
    data.remove_prefix(n);
  }
  return out;
}

// §3.4: a length below 128 in one byte, else four bytes with the top bit set.
bool readLength(std::string_view& in, size_t& out) {
  if (in.empty()) return false;
  auto b0 = static_cast<uint8_t>(in[0]);
  if ((b0 & 0x80) == 0) {
    out = b0;
    in.remove_prefix(1);
    return true;
  }
  if (in.size() < 4) return false;
  out = (size_t{b0 & 0x7fu} << 24) | (size_t{static_cast<uint8_t>(in[1])} << 16) |
        (size_t{static_cast<uint8_t>(in[2])} << 8) | static_cast<uint8_t>(in[3]);
  in.remove_prefix(4);
  return true;
}

bool decodePairs(std::string_view in, std::map<std::string, std::string>& out) {
  while (!in.empty()) {
    size_t name_len = 0;
    size_t value_len = 0;
    if (!readLength(in, name_len) || !readLength(in, value_len)) return false;
    if (in.size() < name_len + value_len) return false;
    out[std::string(in.substr(0, name_len))] = std::string(in.substr(name_len, value_len));
    in.remove_prefix(name_len + value_len);
  }
  return true;
}

}  // namespace

struct FakeFastcgiServer::Connection {
  FakeFastcgiServer* server = nullptr;
  size_t index = 0;
  int fd = -1;
  uv_poll_t* poll = nullptr;
  int events = 0;
  std::string in;
  std::string out;
  std::string params;  // PARAMS content of the current request, until its empty record
  Request* request = nullptr;
  bool closed = false;
};

std::string FakeFastcgiServer::Request::param(const std::string& name) const {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

FakeFastcgiServer::FakeFastcgiServer(uv_loop_t* loop, Transport transport) : loop_(loop) {
  if (transport == Transport::kUnix) {
    char tmpl[] = "/tmp/scalws-fake-fpm-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) std::abort();
    dir_ = tmpl;
    unix_path_ = dir_ + "/fpm.sock";
    listen_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    std::strncpy(sun.sun_path, unix_path_.c_str(), sizeof(sun.sun_path) - 1);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sun), sizeof(sun)) != 0) std::abort();
  } else {
    listen_fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_in sin{};
    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(sin);
    if (bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), sizeof(sin)) != 0 ||
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sin), &len) != 0) {
      std::abort();
    }
    port_ = ntohs(sin.sin_port);
  }
  if (listen(listen_fd_, 64) != 0) std::abort();
  listen_poll_ = new uv_poll_t;
  uv_poll_init(loop_, listen_poll_, listen_fd_);
  listen_poll_->data = this;
  uv_poll_start(listen_poll_, UV_READABLE, &FakeFastcgiServer::onListen);
  timer_ = new uv_timer_t;
  uv_timer_init(loop_, timer_);
  timer_->data = this;
}

FakeFastcgiServer::~FakeFastcgiServer() {
  for (auto& c : connections_) close(*c);
  uv_close(reinterpret_cast<uv_handle_t*>(listen_poll_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
  uv_close(reinterpret_cast<uv_handle_t*>(timer_),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_timer_t*>(h); });
  uv_run(loop_, UV_RUN_NOWAIT);  // the close callbacks
  ::close(listen_fd_);
  if (!dir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
}

std::string FakeFastcgiServer::address() const {
  return unix_path_.empty() ? "tcp:127.0.0.1:" + std::to_string(port_) : "unix:" + unix_path_;
}

bool FakeFastcgiServer::runUntil(const std::function<bool()>& done, uint64_t timeout_ms) {
  timed_out_ = false;
  uv_timer_start(timer_, &FakeFastcgiServer::onTimer, timeout_ms, 0);
  while (!done() && !timed_out_) uv_run(loop_, UV_RUN_ONCE);
  uv_timer_stop(timer_);
  return done();
}

void FakeFastcgiServer::onTimer(uv_timer_t* timer) {
  static_cast<FakeFastcgiServer*>(timer->data)->timed_out_ = true;
}

FakeFastcgiServer::Request* FakeFastcgiServer::waitForRequest(uint64_t timeout_ms,
                                                              bool whole_body) {
  auto ready = [&] {
    if (next_returned_ >= requests_.size()) return false;
    const Request& r = *requests_[next_returned_];
    return r.params_complete && (!whole_body || r.stdin_complete);
  };
  if (!runUntil(ready, timeout_ms)) return nullptr;
  return requests_[next_returned_++].get();
}

bool FakeFastcgiServer::waitForClose(const Request& request, uint64_t timeout_ms) {
  Connection& c = *connections_[request.connection];
  return runUntil([&] { return c.closed; }, timeout_ms);
}

size_t FakeFastcgiServer::openConnections() const {
  size_t n = 0;
  for (const auto& c : connections_) n += c->closed ? 0 : 1;
  return n;
}

void FakeFastcgiServer::respond(const Request& request, std::string_view stdout_data,
                                std::string_view stderr_data) {
  sendStderr(request, stderr_data);
  sendStdout(request, stdout_data);
  queue(request, header(kStdout, request.id, 0));
  endRequest(request);
  if (!request.keep_conn) closeConnection(request);
}

void FakeFastcgiServer::sendStdout(const Request& request, std::string_view data) {
  queue(request, stream(kStdout, request.id, data));
}

void FakeFastcgiServer::sendStderr(const Request& request, std::string_view data) {
  queue(request, stream(kStderr, request.id, data));
}

void FakeFastcgiServer::endRequest(const Request& request, uint32_t app_status,
                                   uint8_t protocol_status) {
  std::string body{static_cast<char>(app_status >> 24),
                   static_cast<char>(app_status >> 16),
                   static_cast<char>(app_status >> 8),
                   static_cast<char>(app_status),
                   static_cast<char>(protocol_status),
                   0,
                   0,
                   0};
  queue(request, header(kEndRequest, request.id, body.size()) + body);
}

void FakeFastcgiServer::sendRaw(const Request& request, std::string_view bytes) {
  queue(request, std::string(bytes));
}

void FakeFastcgiServer::closeConnection(const Request& request) {
  Connection& c = *connections_[request.connection];
  flush(c);  // what is queued goes first, as far as the socket takes it
  close(c);
}

void FakeFastcgiServer::setReading(bool reading) {
  reading_ = reading;
  for (auto& c : connections_) {
    if (!c->closed) updatePoll(*c);
  }
}

void FakeFastcgiServer::queue(const Request& request, std::string bytes) {
  Connection& c = *connections_[request.connection];
  if (c.closed) return;
  c.out += bytes;
  flush(c);
}

void FakeFastcgiServer::onListen(uv_poll_t* handle, int status, int) {
  if (status == 0) static_cast<FakeFastcgiServer*>(handle->data)->accept();
}

void FakeFastcgiServer::accept() {
  while (true) {
    int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;
    auto c = std::make_unique<Connection>();
    c->server = this;
    c->index = connections_.size();
    c->fd = fd;
    c->poll = new uv_poll_t;
    uv_poll_init(loop_, c->poll, fd);
    c->poll->data = c.get();
    connections_.push_back(std::move(c));
    updatePoll(*connections_.back());
  }
}

void FakeFastcgiServer::updatePoll(Connection& c) {
  int events = (reading_ ? UV_READABLE : 0) | (c.out.empty() ? 0 : UV_WRITABLE);
  if (events == c.events) return;
  c.events = events;
  if (events == 0) {
    uv_poll_stop(c.poll);
  } else {
    uv_poll_start(c.poll, events, &FakeFastcgiServer::onConnection);
  }
}

void FakeFastcgiServer::onConnection(uv_poll_t* handle, int status, int events) {
  auto* c = static_cast<Connection*>(handle->data);
  FakeFastcgiServer* self = c->server;
  if (status < 0) {
    self->close(*c);
    return;
  }
  if ((events & UV_WRITABLE) != 0) self->flush(*c);
  if ((events & UV_READABLE) != 0 && !c->closed) self->readFrom(*c);
}

void FakeFastcgiServer::readFrom(Connection& c) {
  char buf[65536];
  while (!c.closed) {
    ssize_t n = ::read(c.fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      close(c);
      return;
    }
    c.in.append(buf, static_cast<size_t>(n));
    parse(c);
  }
}

void FakeFastcgiServer::parse(Connection& c) {
  size_t pos = 0;
  while (c.in.size() - pos >= 8) {
    const auto* h = reinterpret_cast<const uint8_t*>(c.in.data() + pos);
    size_t length = (size_t{h[4]} << 8) | h[5];
    size_t padding = h[6];
    if (c.in.size() - pos < 8 + length + padding) break;
    uint16_t id = static_cast<uint16_t>((h[2] << 8) | h[3]);
    record(c, h[1], id, std::string_view(c.in).substr(pos + 8, length));
    pos += 8 + length + padding;
  }
  c.in.erase(0, pos);
}

void FakeFastcgiServer::record(Connection& c, uint8_t type, uint16_t id, std::string_view content) {
  switch (type) {
    case kBeginRequest: {
      auto r = std::make_unique<Request>();
      r->connection = c.index;
      r->id = id;
      if (content.size() >= 3) {
        r->role = static_cast<uint16_t>((static_cast<uint8_t>(content[0]) << 8) |
                                        static_cast<uint8_t>(content[1]));
        r->keep_conn = (static_cast<uint8_t>(content[2]) & 1) != 0;
      }
      c.request = r.get();
      c.params.clear();
      requests_.push_back(std::move(r));
      return;
    }
    case kParams:
      if (c.request == nullptr) return;
      if (content.empty()) {
        c.request->params_complete = decodePairs(c.params, c.request->params);
      } else {
        c.params.append(content);
      }
      return;
    case kStdin:
      if (c.request == nullptr) return;
      if (content.empty()) {
        c.request->stdin_complete = true;
      } else {
        c.request->stdin_data.append(content);
      }
      return;
    case kAbortRequest:
      if (c.request != nullptr) c.request->aborted = true;
      return;
    default:
      return;
  }
}

void FakeFastcgiServer::flush(Connection& c) {
  while (!c.closed && !c.out.empty()) {
    ssize_t n = ::send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;  // EAGAIN: the poll says when; a broken peer shows up as a read error
    c.out.erase(0, static_cast<size_t>(n));
  }
  if (!c.closed) updatePoll(c);
}

void FakeFastcgiServer::close(Connection& c) {
  if (c.closed) return;
  c.closed = true;
  uv_close(reinterpret_cast<uv_handle_t*>(c.poll),
           [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
  ::close(c.fd);
  c.fd = -1;
}

}  // namespace scalws::testing
