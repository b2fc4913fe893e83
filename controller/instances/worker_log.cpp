#include "controller/instances/worker_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "common/log.h"
#include "common/printable.h"

namespace scalws::controller {

WorkerLog::WorkerLog(uv_loop_t* loop, std::string prefix, Sink sink)
    : loop_(loop),
      prefix_(std::move(prefix)),
      sink_(std::move(sink)),
      watch_(loop),
      rate_(kLinesPerSecond, kLineBurst) {
  if (!sink_) sink_ = [](const std::string& l) { LOG_INFO("%s", l.c_str()); };
}

common::Status WorkerLog::start(common::UniqueFd read_end) {
  close();
  fd_ = std::move(read_end);
  int flags = ::fcntl(fd_.get(), F_GETFL);
  if (flags < 0 || ::fcntl(fd_.get(), F_SETFL, flags | O_NONBLOCK) != 0) {
    return common::errnoStatus(errno, "worker log pipe");
  }
  int rc = watch_.start(fd_.get(), [this] { onReadable(); });
  if (rc != 0) return common::internalError(std::string("worker log pipe: ") + uv_strerror(rc));
  return common::okStatus();
}

void WorkerLog::close() {
  if (!fd_) return;
  onReadable();  // what it wrote before it went
  watch_.close();
  fd_.reset();
  if (!partial_.empty()) line(std::exchange(partial_, std::string()));
}

void WorkerLog::onReadable() {
  char buf[8192];
  while (fd_) {
    ssize_t n = ::read(fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // end of file (every writer gone) or an error: nothing more will come
      watch_.close();
      fd_.reset();
      if (!partial_.empty()) line(std::exchange(partial_, std::string()));
      return;
    }
    std::string_view data(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = data.find('\n')) != std::string_view::npos;) {
      partial_.append(data.substr(0, nl));
      line(partial_);
      partial_.clear();
      data.remove_prefix(nl + 1);
    }
    partial_.append(data);
    // A line longer than any a worker writes: out in pieces, never kept whole.
    while (partial_.size() >= kMaxLine) {
      line(std::string_view(partial_).substr(0, kMaxLine));
      partial_.erase(0, kMaxLine);
    }
  }
}

void WorkerLog::line(std::string_view text) {
  // A line longer than any a worker writes goes out in pieces, each metered.
  while (text.size() > kMaxLine) {
    piece(text.substr(0, kMaxLine));
    text.remove_prefix(kMaxLine);
  }
  piece(text);
}

void WorkerLog::piece(std::string_view text) {
  if (!rate_.take(uv_now(loop_))) {
    ++dropped_;
    ++dropped_total_;
    return;
  }
  if (dropped_ > 0) {
    sink_(prefix_ + "(" + std::to_string(dropped_) + " line(s) dropped: over " +
          std::to_string(static_cast<int>(kLinesPerSecond)) + " a second)");
    dropped_ = 0;
  }
  sink_(prefix_ + common::printable(text));
}

}  // namespace scalws::controller
