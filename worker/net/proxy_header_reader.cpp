#include "worker/net/proxy_header_reader.h"

#include <sys/socket.h>

#include <cerrno>

namespace scalws::worker {
namespace {

// recv() of exactly `len` bytes already known to be queued (they were peeked).
bool consume(int fd, char* into, size_t len) {
  while (len > 0) {
    ssize_t n = ::recv(fd, into, len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    into += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

ProxyHeaderReader::Result ProxyHeaderReader::read(int fd) {
  ssize_t n;
  do {
    n = ::recv(fd, buf_ + have_, sizeof(buf_) - have_, MSG_PEEK);
  } while (n < 0 && errno == EINTR);
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Result::kNeedMore;
  if (n <= 0) return Result::kFailed;
  size_t seen = have_ + static_cast<size_t>(n);
  header_ = parseProxyHeader(std::string_view(buf_, seen));
  switch (header_.outcome) {
    case ProxyHeader::Outcome::kInvalid:
      return Result::kFailed;
    case ProxyHeader::Outcome::kNeedMore:
      // Everything seen belongs to the header: take it off the socket.
      if (seen == sizeof(buf_) || !consume(fd, buf_ + have_, static_cast<size_t>(n))) {
        return Result::kFailed;
      }
      have_ = seen;
      return Result::kNeedMore;
    case ProxyHeader::Outcome::kDone:
      if (!consume(fd, buf_ + have_, header_.length - have_)) return Result::kFailed;
      have_ = header_.length;
      return Result::kDone;
  }
  return Result::kFailed;
}

}  // namespace scalws::worker
