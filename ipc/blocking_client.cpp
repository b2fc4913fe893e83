#include "ipc/blocking_client.h"

#include <poll.h>

#include <array>
#include <cerrno>
#include <vector>

#include "ipc/fd_passing.h"
#include "ipc/ops.h"
#include "ipc/unix_socket.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using Clock = std::chrono::steady_clock;

// Waits for `events` on `fd` until `deadline`.
Status waitFor(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      return Status(StatusCode::kTimeout, "ipc: no reply from the controller in time");
    }
    pollfd pfd{fd, events, 0};
    int rc = ::poll(&pfd, 1, static_cast<int>(left.count()));
    if (rc > 0) return common::okStatus();  // ready, or an error the next call reports
    if (rc < 0 && errno != EINTR) return common::errnoStatus(errno, "ipc: poll");
  }
}

}  // namespace

Result<BlockingClient> BlockingClient::connect(const std::string& path,
                                               std::chrono::milliseconds timeout) {
  auto fd = connectUnix(path, timeout);
  if (!fd.ok()) return fd.status();
  return BlockingClient(std::move(*fd));
}

Result<Json> BlockingClient::call(std::string_view op, Json args,
                                  std::chrono::milliseconds timeout) {
  const OpSpec* spec = findOp(op, Role::kCtl, Role::kController);
  if (spec == nullptr || !spec->expects_reply) {
    return common::invalidArgument("ipc: '" + std::string(op) + "' is not a scalwsctl request");
  }
  SCALWS_RETURN_IF_ERROR(normalizeArgs(args));
  if (!fd_) return Status(StatusCode::kUnavailable, "ipc: not connected to the controller");
  uint64_t id = next_id_++;
  std::string frame;
  SCALWS_RETURN_IF_ERROR(encodeFrame(makeRequest(id, std::string(op), std::move(args)), frame));
  auto deadline = Clock::now() + timeout;
  Status sent = sendAll(frame, deadline);
  if (!sent.ok()) {
    fd_.reset();
    return sent;
  }
  auto reply = awaitReply(id, deadline);
  if (!reply.ok()) {
    fd_.reset();
    return reply.status();
  }
  if (!reply->isError()) return std::move(reply->result);
  StatusCode code = statusCodeForWire(reply->error_code);
  if (reply->id == 0) {  // the controller could not read our frame and is closing
    fd_.reset();
    return Status(code, "ipc: the controller refused the request: " + reply->error_message);
  }
  return Status(code, std::move(reply->error_message));
}

Status BlockingClient::sendAll(std::string_view bytes, Clock::time_point deadline) {
  while (!bytes.empty()) {
    auto sent = sendWithFds(fd_.get(), bytes, {});
    if (!sent.ok()) return sent.status();
    if (sent->would_block) {
      SCALWS_RETURN_IF_ERROR(waitFor(fd_.get(), POLLOUT, deadline));
      continue;
    }
    bytes.remove_prefix(sent->bytes);
  }
  return common::okStatus();
}

Result<Message> BlockingClient::awaitReply(uint64_t id, Clock::time_point deadline) {
  std::array<char, 16 * 1024> buffer;
  for (;;) {
    for (;;) {
      auto next = decoder_.next();
      if (!next.ok()) return next.status();
      if (!next->has_value()) break;
      Message& message = **next;
      if (message.kind == MessageKind::kReply && (message.id == id || message.id == 0)) {
        return std::move(message);
      }
    }
    SCALWS_RETURN_IF_ERROR(waitFor(fd_.get(), POLLIN, deadline));
    std::vector<common::UniqueFd> fds;  // the controller sends none; closed if it does
    auto got = receiveWithFds(fd_.get(), buffer, fds);
    if (!got.ok()) return got.status();
    if (got->would_block) continue;
    if (got->bytes == 0) {
      return Status(StatusCode::kUnavailable, "ipc: the controller closed the connection");
    }
    decoder_.feed(std::string_view(buffer.data(), got->bytes));
  }
}

}  // namespace scalws::ipc
