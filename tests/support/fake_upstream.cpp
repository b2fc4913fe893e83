#include "tests/support/fake_upstream.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

namespace scalws::testing {
namespace {

// Length of a complete chunked body at the start of `s`, or npos while incomplete.
size_t chunkedLength(const std::string& s) {
  size_t pos = 0;
  while (true) {
    size_t eol = s.find("\r\n", pos);
    if (eol == std::string::npos) return std::string::npos;
    size_t size = std::strtoul(s.substr(pos, eol - pos).c_str(), nullptr, 16);
    pos = eol + 2;
    if (size == 0) {
      // Trailers until an empty line.
      while (true) {
        size_t end = s.find("\r\n", pos);
        if (end == std::string::npos) return std::string::npos;
        bool empty = end == pos;
        pos = end + 2;
        if (empty) return pos;
      }
    }
    if (s.size() < pos + size + 2) return std::string::npos;
    pos += size + 2;
  }
}

std::optional<std::string> fieldOf(const std::string& head, const std::string& name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string::npos && pos + 2 < head.size()) {
    size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    if (end == std::string::npos) break;
    std::string line = head.substr(start, end - start);
    size_t colon = line.find(':');
    if (colon != std::string::npos && colon == name.size() &&
        strncasecmp(line.c_str(), name.c_str(), colon) == 0) {
      size_t v = colon + 1;
      while (v < line.size() && (line[v] == ' ' || line[v] == '\t')) ++v;
      return line.substr(v);
    }
    pos = end;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> FakeUpstream::Received::header(const std::string& name) const {
  return fieldOf(head, name);
}

FakeUpstream::FakeUpstream() {
  listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  sin.sin_port = 0;
  ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&sin), sizeof(sin));
  ::listen(listen_fd_, 64);
  socklen_t len = sizeof(sin);
  ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sin), &len);
  port_ = ntohs(sin.sin_port);
  if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) std::abort();
  thread_ = std::thread([this] { run(); });
}

FakeUpstream::~FakeUpstream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  (void)!::write(wake_[1], "x", 1);
  thread_.join();
  for (auto& [id, c] : conns_) ::close(c.fd);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  ::close(wake_[0]);
  ::close(wake_[1]);
}

void FakeUpstream::run() {
  while (true) {
    std::vector<pollfd> fds;
    std::vector<int> ids;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_) return;
      fds.push_back({wake_[0], POLLIN, 0});
      ids.push_back(-1);
      if (listen_fd_ >= 0) {
        fds.push_back({listen_fd_, POLLIN, 0});
        ids.push_back(0);
      }
      for (auto& [id, c] : conns_) {
        fds.push_back({c.fd, POLLIN, 0});
        ids.push_back(id);
      }
    }
    if (::poll(fds.data(), fds.size(), 1000) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      if (ids[i] == -1) {
        char drain[16];
        while (::read(wake_[0], drain, sizeof(drain)) > 0) {
        }
        continue;
      }
      std::lock_guard<std::mutex> lock(mutex_);
      if (ids[i] == 0) {
        if (listen_fd_ < 0) continue;
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) conns_[++accepted_] = Conn{fd, {}};
        continue;
      }
      auto it = conns_.find(ids[i]);
      if (it == conns_.end()) continue;
      char buf[65536];
      ssize_t n = ::recv(it->second.fd, buf, sizeof(buf), MSG_DONTWAIT);
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) continue;
      if (n <= 0) {
        ::close(it->second.fd);
        final_buffers_[it->first] = it->second.buffer;
        conns_.erase(it);
        ++closed_by_peer_;
        continue;
      }
      it->second.buffer.append(buf, static_cast<size_t>(n));
      parse(it->first, it->second);
    }
  }
}

void FakeUpstream::parse(int id, Conn& c) {
  while (true) {
    size_t end = c.buffer.find("\r\n\r\n");
    if (end == std::string::npos) return;
    Received r;
    r.connection = id;
    r.head = c.buffer.substr(0, end + 4);
    std::string rest = c.buffer.substr(end + 4);
    size_t body_len = 0;
    std::optional<std::string> te = fieldOf(r.head, "Transfer-Encoding");
    std::optional<std::string> cl = fieldOf(r.head, "Content-Length");
    if (te && strcasecmp(te->c_str(), "chunked") == 0) {
      body_len = chunkedLength(rest);
      if (body_len == std::string::npos) return;
    } else if (cl) {
      body_len = std::strtoull(cl->c_str(), nullptr, 10);
      if (rest.size() < body_len) return;
    }
    r.body = rest.substr(0, body_len);
    c.buffer = rest.substr(body_len);
    requests_.push_back(std::move(r));
    arrived_.notify_all();
  }
}

std::optional<FakeUpstream::Received> FakeUpstream::waitForRequest(
    std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (!arrived_.wait_for(lock, timeout, [this] { return !requests_.empty(); })) return std::nullopt;
  Received r = std::move(requests_.front());
  requests_.pop_front();
  return r;
}

size_t FakeUpstream::pendingRequests() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return requests_.size();
}

void FakeUpstream::respond(int connection, const std::string& bytes) {
  int fd = -1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = conns_.find(connection);
    if (it == conns_.end()) return;
    fd = it->second.fd;
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    sent += static_cast<size_t>(n);
  }
}

void FakeUpstream::closeConnection(int connection) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = conns_.find(connection);
  if (it == conns_.end()) return;
  ::close(it->second.fd);
  conns_.erase(it);
}

void FakeUpstream::stopListening() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (listen_fd_ >= 0) ::close(listen_fd_);
  listen_fd_ = -1;
  (void)!::write(wake_[1], "x", 1);
}

std::string FakeUpstream::unparsed(int connection) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = conns_.find(connection);
  if (it != conns_.end()) return it->second.buffer;
  auto done = final_buffers_.find(connection);
  return done != final_buffers_.end() ? done->second : std::string();
}

bool FakeUpstream::peerClosed(int connection) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return final_buffers_.count(connection) > 0;
}

int FakeUpstream::connectionsAccepted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return accepted_;
}

int FakeUpstream::connectionsClosedByPeer() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return closed_by_peer_;
}

}  // namespace scalws::testing
