#include "controller/fifo_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/log.h"

namespace scalws::controller {

FifoLog::FifoLog(uv_loop_t* loop, std::string who, std::string pipe_path, std::string log_path,
                 uint64_t cap)
    : who_(std::move(who)),
      pipe_path_(std::move(pipe_path)),
      log_path_(std::move(log_path)),
      cap_(cap < kMinLogCap ? kMinLogCap : cap),
      watch_(loop) {}

common::Status FifoLog::open() {
  if (fd_) return common::okStatus();
  struct stat st;
  if (::lstat(pipe_path_.c_str(), &st) == 0 && !S_ISFIFO(st.st_mode)) {
    ::unlink(pipe_path_.c_str());  // not ours to keep: only a FIFO belongs here
  }
  if (::mkfifo(pipe_path_.c_str(), 0600) != 0 && errno != EEXIST) {
    return common::errnoStatus(errno, "cannot make " + pipe_path_);
  }
  // Read-write: never an end of file while no child holds it, and never a blocked open.
  common::UniqueFd fd(::open(pipe_path_.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return common::errnoStatus(errno, "cannot open " + pipe_path_);
  if (::fstat(fd.get(), &st) != 0 || !S_ISFIFO(st.st_mode)) {
    return common::Status(common::StatusCode::kFailedPrecondition, pipe_path_ + " is not a FIFO");
  }
  // Room for a burst while the loop is busy elsewhere (the child's writes block when it is
  // full); the kernel's default is 64 KiB. Best effort: the default works too.
  (void)::fcntl(fd.get(), F_SETPIPE_SZ, kPipeBytes);
  fd_ = std::move(fd);
  int rc = watch_.start(fd_.get(), [this] { onReadable(); });
  if (rc != 0) {
    fd_.reset();
    return common::internalError("log " + pipe_path_ + ": " + uv_strerror(rc));
  }
  return common::okStatus();
}

void FifoLog::close() {
  if (!fd_) return;
  drain();
  watch_.close();
  fd_.reset();
  file_.reset();
}

void FifoLog::onReadable() {
  char buf[16384];
  while (fd_) {
    ssize_t n = ::read(fd_.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // EAGAIN: all read (no end of file: we hold a write end too)
    copyLines(std::string_view(buf, static_cast<size_t>(n)));
  }
}

void FifoLog::drain() {
  onReadable();
  if (held_.empty()) return;
  std::string last = std::move(held_);
  held_.clear();
  append(last);
}

void FifoLog::copyLines(std::string_view chunk) {
  size_t end = chunk.rfind('\n');
  if (end == std::string_view::npos) {
    held_.append(chunk);
  } else if (held_.empty()) {
    append(chunk.substr(0, end + 1));
    held_.assign(chunk.substr(end + 1));
  } else {
    held_.append(chunk.substr(0, end + 1));
    append(held_);
    held_.assign(chunk.substr(end + 1));
  }
  if (held_.size() > kMaxHeldLine) {  // no end in sight: copied in pieces after all
    std::string piece = std::move(held_);
    held_.clear();
    append(piece);
  }
}

bool FifoLog::ensureFile() {
  if (file_) return true;
  file_ = common::UniqueFd(
      ::open(log_path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0640));
  struct stat st;
  if (!file_ || ::fstat(file_.get(), &st) != 0) {
    if (!failing_) {
      LOG_WARN("%s: cannot open %s: %s; its lines are dropped until that works again", who_.c_str(),
               log_path_.c_str(), std::strerror(errno));
    }
    failing_ = true;
    file_.reset();
    return false;
  }
  size_ = static_cast<uint64_t>(st.st_size);
  return true;
}

void FifoLog::rotate() {
  file_.reset();
  // A rename needs no free space: rotation works on a full disk too.
  if (::rename(log_path_.c_str(), (log_path_ + ".1").c_str()) != 0) {
    int ignored = ::truncate(log_path_.c_str(), 0);  // last resort: never past the cap
    (void)ignored;
  }
  size_ = 0;
}

void FifoLog::append(std::string_view data) {
  // More than a whole log at once: only its end is worth keeping (with room for the note).
  constexpr size_t kNoteRoom = 128;
  if (data.size() > cap_ - kNoteRoom) {
    size_t cut = data.size() - (cap_ - kNoteRoom);
    dropped_ += cut;
    dropped_total_ += cut;
    data.remove_prefix(cut);
  }
  auto lose = [&] {
    dropped_ += data.size();
    dropped_total_ += data.size();
  };
  if (!ensureFile()) return lose();
  std::string note;
  if (dropped_ > 0) {
    note = "scalws-controller: " + std::to_string(dropped_) + " byte(s) of this log lost\n";
  }
  if (size_ + note.size() + data.size() > cap_) {
    rotate();
    if (!ensureFile()) return lose();
  }
  // The note first, then the data; what a failed write leaves unwritten is lost.
  std::string_view parts[2] = {note, data};
  for (std::string_view& part : parts) {
    while (!part.empty()) {
      ssize_t n = ::write(file_.get(), part.data(), part.size());
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        if (!failing_) {
          LOG_WARN("%s: cannot write %s: %s; its lines are dropped until that works again",
                   who_.c_str(), log_path_.c_str(), std::strerror(errno));
        }
        failing_ = true;
        return lose();
      }
      size_ += static_cast<uint64_t>(n);
      part.remove_prefix(static_cast<size_t>(n));
    }
  }
  if (failing_) {
    LOG_INFO("%s: writing %s again (%llu byte(s) lost)", who_.c_str(), log_path_.c_str(),
             static_cast<unsigned long long>(dropped_));
  }
  failing_ = false;
  dropped_ = 0;
}

std::string readFileTail(const std::string& path, size_t max_bytes) {
  common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  off_t size = st.st_size;
  off_t from = size > static_cast<off_t>(max_bytes) ? size - static_cast<off_t>(max_bytes) : 0;
  std::string out(static_cast<size_t>(size - from), '\0');
  size_t got = 0;
  while (got < out.size()) {
    ssize_t n =
        ::pread(fd.get(), out.data() + got, out.size() - got, from + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(got);
  if (from > 0) {  // started mid-line: drop the piece
    size_t nl = out.find('\n');
    out = nl == std::string::npos ? std::string() : out.substr(nl + 1);
  }
  return out;
}

std::string lastLogLines(const std::string& path, size_t max_bytes) {
  std::string text = readFileTail(path, max_bytes);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  size_t cut = text.size();
  for (int lines = 0; lines < 3 && cut != std::string::npos && cut > 0; ++lines) {
    cut = text.rfind('\n', cut - 1);
  }
  if (cut != std::string::npos && cut < text.size()) text = text.substr(cut + 1);
  for (char& c : text) c = c == '\n' ? '|' : c;
  return text;
}

}  // namespace scalws::controller
