#include "worker/handlers/fastcgi/body_spool.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/log.h"
#include "worker/http/error_response.h"

namespace scalws::worker::fastcgi {

void BodySpool::start(Request& request, ResponseWriter& writer, const std::string& temp_dir,
                      Ready ready) {
  auto* spool = new BodySpool(request, writer, temp_dir, std::move(ready));
  writer.setInFlight(spool);
  request.setBodySink(spool);
}

bool BodySpool::openFile() {
  // An unnamed file: nothing is left behind whatever happens to the process.
  int fd = ::open(temp_dir_.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    // A filesystem without O_TMPFILE: a named file, unlinked at once.
    std::string path = temp_dir_ + "/scalws-body.XXXXXX";
    fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (fd >= 0) ::unlink(path.c_str());
  }
  if (fd < 0) return false;
  file_.reset(fd);
  return true;
}

bool BodySpool::store(std::string_view data) {
  if (!inFile() && memory_.size() + data.size() <= kMemoryLimit) {
    memory_.append(data);
    return true;
  }
  if (!inFile()) {
    if (!openFile()) {
      fail("cannot make a temporary file in", errno);
      return false;
    }
    std::string_view held = memory_;
    while (!held.empty()) {
      ssize_t n = ::write(file_.get(), held.data(), held.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        fail("cannot write a temporary file in", n < 0 ? errno : ENOSPC);
        return false;
      }
      held.remove_prefix(static_cast<size_t>(n));
    }
    std::string().swap(memory_);
  }
  while (!data.empty()) {
    ssize_t n = ::write(file_.get(), data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      fail("cannot write a temporary file in", n < 0 ? errno : ENOSPC);
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void BodySpool::fail(const char* what, int err) {
  LOG_ERROR("request %llx: request body of unknown length: %s %s: %s",
            static_cast<unsigned long long>(request_->id), what, temp_dir_.c_str(),
            std::strerror(err));
  Request& request = *request_;
  ResponseWriter& writer = *writer_;
  writer.setInFlight(nullptr);
  request.setBodySink(nullptr);
  sendError(request, writer, 500, {}, true);
  release();
}

void BodySpool::onBodyData(std::string_view data) noexcept {
  if (released_) return;
  size_ += data.size();
  store(data);  // fails the request itself
}

void BodySpool::onBodyEnd() noexcept {
  if (released_) return;
  request_->setBodySink(nullptr);
  request_->chunked = false;
  request_->content_length = size_;
  Ready ready = std::move(ready_);
  ready(*this);  // the Exchange takes the writer's InFlight from here
}

void BodySpool::abort() noexcept {
  // The client went away, or the body passed max_body (the stream answers 413).
  release();
}

void BodySpool::setPaused(bool paused) {
  paused_ = paused;
  if (!paused_) pump();
}

void BodySpool::pump() {
  if (pumping_ || reader_ == nullptr) return;  // the outer pump goes on once this returns
  pumping_ = true;
  while (!paused_ && !released_ && delivered_ < size_) {
    std::string_view piece;
    if (!inFile()) {
      piece = std::string_view(memory_).substr(delivered_, kPiece);
    } else {
      if (!piece_) piece_ = std::make_unique<char[]>(kPiece);
      size_t want = static_cast<size_t>(std::min<uint64_t>(kPiece, size_ - delivered_));
      ssize_t n = ::pread(file_.get(), piece_.get(), want, static_cast<off_t>(delivered_));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        // Cannot happen short of a failing disk: the reader sees the body end early, and
        // PHP a body shorter than CONTENT_LENGTH.
        LOG_ERROR("request %llx: cannot read back the request body: %s",
                  static_cast<unsigned long long>(request_->id),
                  std::strerror(n < 0 ? errno : EIO));
        delivered_ = size_;
        break;
      }
      piece = std::string_view(piece_.get(), static_cast<size_t>(n));
    }
    delivered_ += piece.size();
    reader_->onBodyData(piece);
  }
  if (!paused_ && !released_ && delivered_ == size_ && !end_sent_) {
    end_sent_ = true;
    reader_->onBodyEnd();
  }
  pumping_ = false;
  if (released_) delete this;
}

void BodySpool::release() {
  released_ = true;
  if (!pumping_) delete this;
}

}  // namespace scalws::worker::fastcgi
