#include "ipc/endpoint.h"

#include <array>
#include <deque>
#include <unordered_map>
#include <utility>

#include "common/log.h"
#include "ipc/fd_passing.h"
#include "ipc/frame.h"

namespace scalws::ipc {

using common::Result;
using common::Status;
using common::StatusCode;
using common::UniqueFd;

namespace {

constexpr size_t kReadBufferSize = 64 * 1024;
constexpr int kReadsPerWakeup = 16;  // then yield to the loop's other handles
constexpr size_t kMaxQueuedBytes = 16 * 1024 * 1024;
// fds received but not yet claimed by a complete frame: a few frames' worth at most.
constexpr size_t kMaxQueuedFds = 4 * kMaxFdsPerFrame;

}  // namespace

namespace detail {

struct OutFrame {
  std::string bytes;
  size_t sent = 0;
  std::vector<UniqueFd> fds;  // sent with the first byte, then closed here
};

class EndpointCore : public std::enable_shared_from_this<EndpointCore> {
 public:
  enum class State { kOpen, kClosed };
  // Who closes decides who hears about it (see endpoint.h).
  enum class CloseMode { kByPeer, kByOwner, kDestroyed };

  EndpointCore(UniqueFd fd, const EndpointOptions& options)
      : options_(options), fd_(std::move(fd)) {}

  Status start(uv_loop_t* loop) {
    int rc = uv_poll_init(loop, &poll_, fd_.get());
    if (rc != 0)
      return Status(StatusCode::kInternal, std::string("ipc: uv_poll_init: ") + uv_strerror(rc));
    poll_.data = this;
    self_ = shared_from_this();  // released by onHandleClosed
    updatePoll();
    may_write_ = options_.peer != Role::kCtl;  // the other peers are ours by construction
    if (options_.peer == Role::kCtl) {
      auto identity = identifyPeer(fd_.get());
      if (identity.ok()) {
        may_write_ = mayCall(Access::kWrite, *identity, options_.admin_gid);
        peer_ = std::move(*identity);
      } else {
        LOG_WARN("%s; treating the peer as unprivileged", identity.status().message().c_str());
      }
    }
    return common::okStatus();
  }

  Status send(Message message, std::vector<UniqueFd> fds) {
    if (state_ != State::kOpen) return Status(StatusCode::kUnavailable, "ipc: channel closed");
    if (queued_bytes_ > kMaxQueuedBytes) {
      return Status(StatusCode::kResourceExhausted,
                    "ipc: peer " + std::string(roleName(options_.peer)) + " is not reading");
    }
    OutFrame frame;
    SCALWS_RETURN_IF_ERROR(encodeFrame(message, frame.bytes));
    frame.fds = std::move(fds);
    queued_bytes_ += frame.bytes.size();
    out_.push_back(std::move(frame));
    // A write error here is reported from the loop (see onPoll), never to this caller's
    // caller through onClose while it is still inside send.
    if (!write_error_) {
      Status status = flush();
      if (!status.ok()) write_error_ = std::move(status);
    }
    updatePoll();
    return common::okStatus();
  }

  void close(Status why, CloseMode mode) {
    if (state_ != State::kOpen) return;
    state_ = State::kClosed;
    uv_close(reinterpret_cast<uv_handle_t*>(&poll_), onHandleClosed);
    fd_.reset();
    received_fds_.clear();
    out_.clear();
    queued_bytes_ = 0;
    handlers_.clear();  // a running handler is kept alive by its caller's copy
    auto pending = std::move(pending_);
    pending_.clear();
    CloseCallback on_close = std::move(on_close_);
    on_close_ = nullptr;
    if (mode == CloseMode::kDestroyed) return;
    for (auto& [id, entry] : pending) {
      std::string text = "ipc: channel closed before the reply to '" + entry.op + "'";
      if (!why.ok()) text += ": " + why.message();
      entry.callback(Status(StatusCode::kUnavailable, std::move(text)));
    }
    if (mode == CloseMode::kByPeer && on_close) on_close(why);
  }

  bool isOpen() const { return state_ == State::kOpen; }

  using Handler = Endpoint::Handler;
  using ReplyCallback = Endpoint::ReplyCallback;
  using CloseCallback = Endpoint::CloseCallback;

 private:
  friend class scalws::ipc::Endpoint;
  struct Pending {
    std::string op;
    ReplyCallback callback;
  };

  static void onHandleClosed(uv_handle_t* handle) {
    static_cast<EndpointCore*>(handle->data)->self_.reset();  // may free this
  }

  static void onPoll(uv_poll_t* handle, int status, int events) {
    auto* core = static_cast<EndpointCore*>(handle->data);
    if (status < 0) {
      core->close(Status(StatusCode::kIoError, std::string("ipc: poll: ") + uv_strerror(status)),
                  CloseMode::kByPeer);
      return;
    }
    if (core->write_error_) {
      core->close(*core->write_error_, CloseMode::kByPeer);
      return;
    }
    if (events & UV_WRITABLE) {
      Status written = core->flush();
      if (!written.ok()) return core->close(written, CloseMode::kByPeer);
      core->updatePoll();
    }
    if (events & UV_READABLE) core->readSome();
  }

  Status flush() {
    while (!out_.empty()) {
      OutFrame& frame = out_.front();
      std::array<int, kMaxFdsPerFrame> raw;
      for (size_t i = 0; i < frame.fds.size(); ++i) raw[i] = frame.fds[i].get();
      std::string_view rest = std::string_view(frame.bytes).substr(frame.sent);
      auto sent = sendWithFds(fd_.get(), rest, std::span<const int>(raw.data(), frame.fds.size()));
      if (!sent.ok()) return sent.status();
      if (sent->would_block) break;
      if (sent->bytes > 0) frame.fds.clear();
      frame.sent += sent->bytes;
      queued_bytes_ -= sent->bytes;
      if (frame.sent == frame.bytes.size()) out_.pop_front();
    }
    return common::okStatus();
  }

  void updatePoll() {
    if (state_ != State::kOpen) return;
    int events = UV_READABLE | (out_.empty() && !write_error_ ? 0 : UV_WRITABLE);
    if (events == poll_events_) return;
    poll_events_ = events;
    uv_poll_start(&poll_, events, onPoll);
  }

  void readSome() {
    for (int i = 0; i < kReadsPerWakeup && state_ == State::kOpen; ++i) {
      std::vector<UniqueFd> fds;
      auto got = receiveWithFds(fd_.get(), read_buffer_, fds);
      if (!got.ok()) {
        if (got.status().code() == StatusCode::kResourceExhausted) {
          return protocolError(errc::kBadFrame, got.status());
        }
        return close(got.status(), CloseMode::kByPeer);
      }
      if (got->would_block) return;
      if (got->bytes == 0) {
        Status why = decoder_.idle() ? common::okStatus()
                                     : Status(StatusCode::kIoError,
                                              "ipc: peer closed the channel inside a frame");
        return close(why, CloseMode::kByPeer);
      }
      for (UniqueFd& fd : fds) received_fds_.push_back(std::move(fd));
      if (received_fds_.size() > kMaxQueuedFds) {
        return protocolError(errc::kBadFrame, common::invalidArgument("ipc: too many fds queued"));
      }
      decoder_.feed(std::string_view(read_buffer_.data(), got->bytes));
      dispatchFrames();
    }
  }

  void dispatchFrames() {
    while (state_ == State::kOpen) {
      auto next = decoder_.next();
      if (!next.ok()) return protocolError(wireCodeForParseError(next.status()), next.status());
      if (!next->has_value()) break;
      Message message = std::move(**next);
      if (message.kind == MessageKind::kReply) {
        handleReply(std::move(message));
      } else {
        handleRequest(std::move(message));
      }
    }
    // fds come with the first byte of their frame, so once every byte is consumed any fd
    // still queued belongs to no frame.
    if (state_ == State::kOpen && decoder_.idle() && !received_fds_.empty()) {
      protocolError(errc::kBadFrame,
                    common::invalidArgument("ipc: " + std::to_string(received_fds_.size()) +
                                            " fds arrived that no frame names"));
    }
  }

  void handleRequest(Message message) {
    if (message.fd_count > received_fds_.size()) {
      return protocolError(
          errc::kBadFrame,
          common::invalidArgument("ipc: frame names " + std::to_string(message.fd_count) +
                                  " fds, " + std::to_string(received_fds_.size()) + " arrived"));
    }
    std::vector<UniqueFd> fds;
    for (size_t i = 0; i < message.fd_count; ++i) {
      fds.push_back(std::move(received_fds_.front()));
      received_fds_.pop_front();
    }
    Replier replier(weak_from_this(), message.id, message.op);
    const OpSpec* spec = findOp(message.op, options_.peer, options_.local);
    auto handler = handlers_.find(message.op);
    if (spec == nullptr || handler == handlers_.end()) {
      if (message.id == 0) {
        LOG_WARN("ipc: notification '%s' from %s dropped: not accepted here", message.op.c_str(),
                 roleName(options_.peer).data());
      }
      return replier.fail(errc::kUnknownOp, "unknown op '" + message.op + "' from " +
                                                std::string(roleName(options_.peer)));
    }
    if (spec->access == Access::kWrite && !may_write_) {
      return replier.fail(
          errc::kPermissionDenied,
          "'" + message.op + "' changes state: it needs root or group " + std::string(kAdminGroup));
    }
    std::shared_ptr<const Handler> keep = handler->second;
    (*keep)(message, std::move(fds), std::move(replier));
  }

  void handleReply(Message message) {
    if (message.id == 0) {  // the peer could not read something we sent, and is closing
      return close(Status(statusCodeForWire(message.error_code),
                          "ipc: peer refused a frame: " + message.error_message),
                   CloseMode::kByPeer);
    }
    auto it = pending_.find(message.id);
    if (it == pending_.end()) {
      LOG_WARN("ipc: reply to unknown request id %llu from %s dropped",
               static_cast<unsigned long long>(message.id), roleName(options_.peer).data());
      return;
    }
    ReplyCallback callback = std::move(it->second.callback);
    pending_.erase(it);
    if (message.isError()) {
      callback(Status(statusCodeForWire(message.error_code), std::move(message.error_message)));
    } else {
      callback(std::move(message.result));
    }
  }

  void protocolError(std::string_view code, const Status& why) {
    LOG_WARN("ipc: closing the channel to %s: %s", roleName(options_.peer).data(),
             why.message().c_str());
    (void)send(makeErrorReply(0, code, why.message()), {});
    close(why, CloseMode::kByPeer);
  }

  const EndpointOptions options_;
  State state_ = State::kOpen;
  UniqueFd fd_;
  uint64_t next_id_ = 1;
  std::unordered_map<std::string, std::shared_ptr<const Handler>> handlers_;
  std::unordered_map<uint64_t, Pending> pending_;
  CloseCallback on_close_;
  std::optional<PeerIdentity> peer_;
  size_t queued_bytes_ = 0;
  uv_poll_t poll_{};
  int poll_events_ = 0;
  std::shared_ptr<EndpointCore> self_;
  bool may_write_ = false;
  std::optional<Status> write_error_;
  FrameDecoder decoder_;
  std::deque<UniqueFd> received_fds_;
  std::deque<OutFrame> out_;
  std::array<char, kReadBufferSize> read_buffer_;
};

}  // namespace detail

using detail::EndpointCore;

Result<std::unique_ptr<Endpoint>> Endpoint::create(uv_loop_t* loop, UniqueFd fd,
                                                   const EndpointOptions& options) {
  if (!fd) return common::invalidArgument("ipc: endpoint needs a socket");
  auto core = std::make_shared<EndpointCore>(std::move(fd), options);
  SCALWS_RETURN_IF_ERROR(core->start(loop));
  return std::unique_ptr<Endpoint>(new Endpoint(std::move(core)));
}

Endpoint::Endpoint(std::shared_ptr<EndpointCore> core) : core_(std::move(core)) {}

Endpoint::~Endpoint() {
  core_->close(common::okStatus(), EndpointCore::CloseMode::kDestroyed);
}

Status Endpoint::registerHandler(std::string_view op, Handler handler) {
  const EndpointOptions& o = core_->options_;
  if (findOp(op, o.peer, o.local) == nullptr) {
    return common::invalidArgument("ipc: op '" + std::string(op) + "' is not sent by " +
                                   std::string(roleName(o.peer)) + " to " +
                                   std::string(roleName(o.local)));
  }
  if (core_->isOpen()) {
    core_->handlers_[std::string(op)] = std::make_shared<const Handler>(std::move(handler));
  }
  return common::okStatus();
}

void Endpoint::onClose(CloseCallback callback) {
  if (core_->isOpen()) core_->on_close_ = std::move(callback);
}

Status Endpoint::request(std::string_view op, Json args, std::vector<UniqueFd> fds,
                         ReplyCallback callback) {
  const EndpointOptions& o = core_->options_;
  const OpSpec* spec = findOp(op, o.local, o.peer);
  if (spec == nullptr || !spec->expects_reply) {
    return common::invalidArgument("ipc: '" + std::string(op) + "' is not a request from " +
                                   std::string(roleName(o.local)) + " to " +
                                   std::string(roleName(o.peer)));
  }
  SCALWS_RETURN_IF_ERROR(normalizeArgs(args));
  if (fds.size() > kMaxFdsPerFrame) {
    return common::invalidArgument("ipc: at most " + std::to_string(kMaxFdsPerFrame) +
                                   " fds per frame");
  }
  uint64_t id = core_->next_id_;
  size_t fd_count = fds.size();
  SCALWS_RETURN_IF_ERROR(
      core_->send(makeRequest(id, std::string(op), std::move(args), fd_count), std::move(fds)));
  ++core_->next_id_;
  core_->pending_.emplace(id, EndpointCore::Pending{std::string(op), std::move(callback)});
  return common::okStatus();
}

Status Endpoint::notify(std::string_view op, Json args) {
  const EndpointOptions& o = core_->options_;
  const OpSpec* spec = findOp(op, o.local, o.peer);
  if (spec == nullptr || spec->expects_reply) {
    return common::invalidArgument("ipc: '" + std::string(op) + "' is not a notification from " +
                                   std::string(roleName(o.local)) + " to " +
                                   std::string(roleName(o.peer)));
  }
  SCALWS_RETURN_IF_ERROR(normalizeArgs(args));
  return core_->send(makeRequest(0, std::string(op), std::move(args)), {});
}

void Endpoint::close() {
  core_->close(common::okStatus(), EndpointCore::CloseMode::kByOwner);
}

bool Endpoint::isOpen() const {
  return core_->isOpen();
}

const std::optional<PeerIdentity>& Endpoint::peerIdentity() const {
  return core_->peer_;
}

size_t Endpoint::queuedBytes() const {
  return core_->queued_bytes_;
}

Replier::Replier(std::weak_ptr<EndpointCore> core, uint64_t id, std::string op)
    : core_(std::move(core)), id_(id), op_(std::move(op)), answered_(id == 0) {}

Replier::Replier(Replier&& other) noexcept
    : core_(std::move(other.core_)),
      id_(other.id_),
      op_(std::move(other.op_)),
      answered_(std::exchange(other.answered_, true)) {}

Replier& Replier::operator=(Replier&& other) noexcept {
  if (this != &other) {
    if (!answered_) fail(errc::kInternal, "the handler for '" + op_ + "' did not reply");
    core_ = std::move(other.core_);
    id_ = other.id_;
    op_ = std::move(other.op_);
    answered_ = std::exchange(other.answered_, true);
  }
  return *this;
}

Replier::~Replier() {
  if (!answered_) fail(errc::kInternal, "the handler for '" + op_ + "' did not reply");
}

void Replier::ok(Json result) {
  send(makeReply(id_, std::move(result)));
}

void Replier::fail(std::string_view code, std::string message) {
  send(makeErrorReply(id_, code, std::move(message)));
}

void Replier::fail(const Status& status) {
  fail(wireCodeForStatus(status.code()), status.message());
}

void Replier::answer(common::Result<Json> result) {
  if (result.ok()) return ok(std::move(result).value());
  fail(result.status());
}

void Replier::send(Message reply) {
  if (answered_) return;
  answered_ = true;
  auto core = core_.lock();
  if (!core) return;
  bool was_error = reply.isError();
  Status sent = core->send(std::move(reply), {});
  if (sent.ok() || !core->isOpen()) return;
  LOG_WARN("ipc: reply to '%s' not sent: %s", op_.c_str(), sent.message().c_str());
  // A result too large for a frame must still end the peer's wait.
  if (!was_error) (void)core->send(makeErrorReply(id_, errc::kFailed, sent.message()), {});
}

}  // namespace scalws::ipc
