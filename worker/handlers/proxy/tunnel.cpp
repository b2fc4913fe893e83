#include "worker/handlers/proxy/tunnel.h"

#include <cerrno>
#include <cstring>

#include "common/log.h"
#include "worker/handlers/proxy/upstream_pools.h"
#include "worker/loop/worker_loop.h"
#include "worker/net/buffer_pool.h"

namespace scalws::worker::proxy {
namespace {

constexpr int kTunnelReadsPerEvent = 8;

}  // namespace

Tunnel::Tunnel(UpstreamPools& pools) : pools_(pools) {}

Tunnel::~Tunnel() {
  if (read_buf_) pools_.loop().buffers().give(std::move(read_buf_));
}

void Tunnel::start(UpstreamPool& pool, UpstreamConnection& connection, Request& request,
                   ResponseWriter& writer, std::string_view from_upstream,
                   std::string_view to_upstream, uint64_t idle_ms) {
  state_ = State::kOpen;
  pool_ = &pool;
  conn_ = &connection;
  request_ = &request;
  writer_ = &writer;
  idle_ms_ = idle_ms;
  up_.assign(to_upstream);
  up_pos_ = 0;
  up_shut_ = body_paused_ = client_paused_ = calling_writer_ = aborted_ = false;
  connection.lend(this);
  writer.setInFlight(this);
  request.setBodySink(this);
  // The client may have been held back while the upgrade was under way.
  writer.setBodyReadPaused(false);
  pools_.loop().armTimeout(*this, idle_ms_);
  if (!from_upstream.empty()) {
    toClient(from_upstream);
    if (state_ == State::kFree) return;
  }
  if (!flushUp()) return;
  updateWatch();
}

void Tunnel::toClient(std::string_view data) {
  calling_writer_ = true;
  writer_->sendBody(data, BodyLifetime::kCopy);
  calling_writer_ = false;
  if (aborted_) {
    abort();
    return;
  }
  if (writer_->queuedBytes() > kHighWater) {
    // The client reads slower than the upstream sends: stop reading the upstream.
    client_paused_ = true;
    writer_->notifyWhenWritable(this);
  }
}

void Tunnel::onWritable() noexcept {
  if (state_ == State::kFree || !client_paused_) return;
  client_paused_ = false;
  updateWatch();
}

void Tunnel::onBodyData(std::string_view data) noexcept {
  if (state_ != State::kOpen) return;
  up_.append(data);
  pools_.loop().armTimeout(*this, idle_ms_);
  if (up_.size() - up_pos_ > kHighWater && !body_paused_) {
    body_paused_ = true;
    writer_->setBodyReadPaused(true);
  }
  flushUp();
}

void Tunnel::onBodyEnd() noexcept {
  if (state_ != State::kOpen) return;
  state_ = State::kClientDone;
  flushUp();
}

bool Tunnel::flushUp() {
  while (up_pos_ < up_.size()) {
    iovec iov{up_.data() + up_pos_, up_.size() - up_pos_};
    ssize_t n = conn_->transport().writev(&iov, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {
      end(false, strerror(errno));
      return false;
    }
    up_pos_ += static_cast<size_t>(n);
  }
  if (up_pos_ == up_.size()) {
    up_.clear();
    up_pos_ = 0;
    if (state_ == State::kClientDone && !up_shut_) {
      // The client is done sending: so are we, towards the upstream (it sees EOF).
      up_shut_ = true;
      conn_->transport().shutdownWrite();
    }
  }
  if (body_paused_ && up_.size() - up_pos_ <= kHighWater / 2) {
    body_paused_ = false;
    writer_->setBodyReadPaused(false);
  }
  updateWatch();
  return true;
}

void Tunnel::onUpstreamEvent(int status, int events) noexcept {
  if (status < 0) {
    end(false, uv_strerror(status));
    return;
  }
  if ((events & UV_WRITABLE) != 0 && up_pos_ < up_.size() && !flushUp()) return;
  if (!client_paused_ && ((events & UV_READABLE) != 0 || conn_->transport().hasBufferedInput())) {
    readUp();
  }
}

void Tunnel::readUp() {
  if (!read_buf_) read_buf_ = pools_.loop().buffers().take();
  for (int i = 0; i < kTunnelReadsPerEvent && !client_paused_; ++i) {
    ssize_t n = conn_->transport().read(read_buf_.get(), BufferPool::kBlockSize);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n < 0) {
      end(false, strerror(errno));
      return;
    }
    if (n == 0) {
      end(true, "");  // the upstream finished: so does the client's side
      return;
    }
    pools_.loop().armTimeout(*this, idle_ms_);
    toClient(std::string_view(read_buf_.get(), static_cast<size_t>(n)));
    if (state_ == State::kFree) return;
    if (static_cast<size_t>(n) < BufferPool::kBlockSize && !conn_->transport().hasBufferedInput()) {
      break;
    }
  }
  updateWatch();
}

void Tunnel::updateWatch() {
  if (state_ == State::kFree || conn_ == nullptr) return;
  bool buffered = !client_paused_ && conn_->transport().hasBufferedInput();
  conn_->watch(!client_paused_, up_pos_ < up_.size() || buffered);
}

void Tunnel::onTimeout() noexcept {
  if (state_ == State::kFree) return;
  end(false, "idle timeout");
}

void Tunnel::end(bool cleanly, const char* why) {
  if (!cleanly) {
    LOG_INFO("upstream %s: request %llx: tunnel closed: %s", pool_->spec().name.c_str(),
             static_cast<unsigned long long>(request_->id), why);
  }
  UpstreamConnection* c = conn_;
  conn_ = nullptr;
  pool_->release(*c, false);
  ResponseWriter* w = writer_;
  w->setInFlight(nullptr);
  teardown();
  if (cleanly) {
    w->finish();
  } else {
    w->abortResponse();
  }
}

void Tunnel::abort() noexcept {
  aborted_ = true;
  if (calling_writer_ || state_ == State::kFree) return;
  // The client is gone: the writer must not be used.
  writer_ = nullptr;
  if (conn_ != nullptr) {
    UpstreamConnection* c = conn_;
    conn_ = nullptr;
    pool_->release(*c, false);
  }
  teardown();
}

void Tunnel::teardown() {
  pools_.loop().disarmTimeout(*this);
  if (read_buf_) pools_.loop().buffers().give(std::move(read_buf_));
  if (up_.capacity() > 4 * kHighWater) std::string().swap(up_);
  up_.clear();
  state_ = State::kFree;
  pool_ = nullptr;
  request_ = nullptr;
  writer_ = nullptr;
  pools_.recycleTunnel(*this);
}

}  // namespace scalws::worker::proxy
