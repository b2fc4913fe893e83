// BlockingClient: scalwsctl's side of the control socket, without an event loop.
//
// One request at a time: call() sends it and blocks until its reply or the timeout.
// Frames that are not the awaited reply (notifications) are skipped; fds that arrive are
// closed. After a transport error (timeout, closed connection, bad frame) the connection
// is closed and every later call() fails with kUnavailable: a late reply could otherwise
// be taken for the next one's.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/frame.h"
#include "ipc/message.h"

namespace scalws::ipc {

class BlockingClient {
 public:
  // Connects to the control socket at `path` (ipc/unix_socket.h connectUnix).
  static common::Result<BlockingClient> connect(const std::string& path,
                                                std::chrono::milliseconds timeout);

  // `op` must be a scalwsctl -> controller op of the op table. The controller's error
  // reply comes back as Status(statusCodeForWire(code), message); transport failures
  // as kTimeout, kUnavailable or kInvalidArgument (a bad frame from the controller).
  common::Result<Json> call(std::string_view op, Json args, std::chrono::milliseconds timeout);

  bool connected() const { return fd_.valid(); }

 private:
  explicit BlockingClient(common::UniqueFd fd) : fd_(std::move(fd)) {}
  common::Status sendAll(std::string_view bytes, std::chrono::steady_clock::time_point deadline);
  // The reply to `id` (or a connection-level error reply, id 0), or a transport error.
  common::Result<Message> awaitReply(uint64_t id, std::chrono::steady_clock::time_point deadline);

  common::UniqueFd fd_;
  FrameDecoder decoder_;
  uint64_t next_id_ = 1;
};

}  // namespace scalws::ipc
