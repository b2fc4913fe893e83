// Endpoint: one side of an IPC channel (a connected Unix stream socket) on a libuv loop.
//
// Used by the controller (towards each worker and each scalwsctl connection) and by
// scalwsd (towards the controller). Single-threaded: every call and every callback
// happens on the loop's thread. Callbacks fire only from the loop (never from inside
// create, registerHandler, request, notify or a Replier call), except that close() calls
// the pending reply callbacks before it returns.
//
// Ownership and lifetime
// - The Endpoint owns the socket fd. Destroying it closes the channel at once; pending
//   reply callbacks and onClose are then dropped without being called. Destroying it
//   from inside any of its own callbacks is allowed. Its internals are freed by libuv's
//   close callback, so the loop must run once more before uv_loop_close.
// - fds passed to request() are owned by the endpoint from that call on and closed once
//   sent (keep a UniqueFd::duplicate if you need them later). fds handed to a handler are
//   the handler's; whatever it does not keep is closed when the vector goes away.
//
// Errors
// - A request whose op is not in the op table as peer -> local, or has no handler here,
//   gets an error reply `unknown_op`; a write op from a scalwsctl peer that is neither
//   root nor in group scalws gets `permission_denied`. The channel stays open.
// - A protocol error (bad frame, bad JSON, unknown version, fds that no frame names,
//   truncated fds) sends an error reply with id 0 where the socket allows, then closes.
// - When the channel closes for any reason but the owner's close()/destruction, every
//   pending reply callback gets kUnavailable, then onClose(why) fires once: why is ok for
//   an orderly end of stream, an error otherwise. Received but unclaimed fds are closed.
#pragma once

#include <uv.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"
#include "ipc/message.h"
#include "ipc/ops.h"
#include "ipc/peer_credentials.h"

namespace scalws::ipc {

namespace detail {
class EndpointCore;
}

struct EndpointOptions {
  Role local = Role::kController;
  Role peer = Role::kWorker;
  // Only when peer == kCtl: the gid of group scalws (lookupGroup(kAdminGroup)), whose
  // members may call write ops; nullopt lets only root write.
  std::optional<gid_t> admin_gid;
};

// Answers one request; move-only. Only the first ok()/fail() counts. A Replier dropped
// without an answer replies `internal` so the peer never waits forever. For a
// notification (id 0), or once the endpoint is closed or gone, calls are no-ops; a
// Replier may outlive its Endpoint.
class Replier {
 public:
  Replier(Replier&& other) noexcept;
  Replier& operator=(Replier&&) noexcept;
  Replier(const Replier&) = delete;
  Replier& operator=(const Replier&) = delete;
  ~Replier();

  void ok(Json result = Json::object());
  void fail(std::string_view code, std::string message);
  void fail(const common::Status& status);   // code from wireCodeForStatus
  void answer(common::Result<Json> result);  // ok(*result) or fail(result.status())
  bool answered() const { return answered_; }

 private:
  friend class detail::EndpointCore;
  Replier(std::weak_ptr<detail::EndpointCore> core, uint64_t id, std::string op);
  void send(Message reply);

  std::weak_ptr<detail::EndpointCore> core_;
  uint64_t id_ = 0;
  std::string op_;
  bool answered_ = true;
};

class Endpoint {
 public:
  using Handler =
      std::function<void(const Message& request, std::vector<common::UniqueFd> fds, Replier)>;
  // A peer's error reply arrives as Status(statusCodeForWire(code), message).
  using ReplyCallback = std::function<void(common::Result<Json> result)>;
  using CloseCallback = std::function<void(const common::Status& why)>;

  // Takes `fd`, a connected SOCK_STREAM Unix socket, and starts reading on `loop`.
  // Register handlers before the loop next runs. For a kCtl peer, SO_PEERCRED is read
  // here (an unreadable peer is treated as unprivileged).
  static common::Result<std::unique_ptr<Endpoint>> create(uv_loop_t* loop, common::UniqueFd fd,
                                                          const EndpointOptions& options);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // kInvalidArgument unless the op table has `op` as peer -> local. Replaces an earlier
  // handler for the same op (not from inside that handler).
  common::Status registerHandler(std::string_view op, Handler handler);
  void onClose(CloseCallback callback);

  // Sends a request (op must be local -> peer with a reply) and calls `callback` once
  // with the result. An error return means nothing was sent and the callback is dropped:
  // op not allowed, args not an object, too many fds, frame too large, channel closed,
  // or over 16 MiB already queued for a peer that does not read.
  common::Status request(std::string_view op, Json args, std::vector<common::UniqueFd> fds,
                         ReplyCallback callback);
  // Sends a notification (op must be local -> peer without a reply). Errors as request.
  common::Status notify(std::string_view op, Json args);

  // Closes now: pending reply callbacks get kUnavailable before this returns; onClose
  // does not fire. Idempotent.
  void close();
  bool isOpen() const;

  // For a kCtl peer: who connected (nullopt if SO_PEERCRED failed, or another role).
  const std::optional<PeerIdentity>& peerIdentity() const;
  // Outgoing bytes not yet taken by the kernel.
  size_t queuedBytes() const;

 private:
  explicit Endpoint(std::shared_ptr<detail::EndpointCore> core);
  std::shared_ptr<detail::EndpointCore> core_;
};

}  // namespace scalws::ipc
