#include "worker/handlers/fastcgi/script_resolver.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <ctime>
#include <functional>

namespace scalws::worker::fastcgi {
namespace {

constexpr std::string_view kPhp = ".php";

// A segment names a script when it ends in ".php" and is more than the suffix: ".php"
// alone is a dotfile, never a script (the classic "/uploads/x.jpg/.php").
bool isPhpSegment(std::string_view segment) {
  return segment.size() > kPhp.size() && segment.ends_with(kPhp);
}

std::atomic<uint64_t> next_resolver_id{1};

uint64_t coarseNowMs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);  // vDSO: no system call
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

// Scripts found recently, per thread (one per event loop, so no lock): a hit spares the
// openat2 + fstat + close of the check. Only existing scripts are kept, each for
// ScriptResolver::kFoundValidMs, as nginx's open_file_cache_valid keeps what it found.
struct FoundScript {
  uint64_t resolver = 0;
  uint64_t expires_ms = 0;
  std::string name;
};
constexpr size_t kFoundSlots = 64;
thread_local FoundScript found_scripts[kFoundSlots];

FoundScript& foundSlot(uint64_t resolver, std::string_view name) {
  size_t h = std::hash<std::string_view>()(name) ^ (resolver * 0x9E3779B97F4A7C15ULL);
  return found_scripts[h % kFoundSlots];
}

}  // namespace

common::Result<ScriptResolver> ScriptResolver::open(const std::string& root, std::string index,
                                                    std::string front_controller) {
  int fd = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return common::errnoStatus(errno, "cannot open php root \"" + root + "\"");
  ScriptResolver r;
  r.id_ = next_resolver_id.fetch_add(1, std::memory_order_relaxed);
  r.root_fd_.reset(fd);
  r.root_ = root;
  r.index_ = std::move(index);
  r.front_controller_ = std::move(front_controller);
  return r;
}

bool ScriptResolver::isScript(std::string_view script_name) const {
  // script_name starts with "/"; openat2 wants it relative to the root fd.
  std::string_view rel = script_name.substr(1);
  char path[PATH_MAX];
  if (rel.empty() || rel.size() >= sizeof(path) || rel.find('\0') != std::string_view::npos) {
    return false;
  }
  FoundScript& found = foundSlot(id_, script_name);
  uint64_t now = coarseNowMs();
  if (found.resolver == id_ && found.expires_ms > now && found.name == script_name) return true;
  std::memcpy(path, rel.data(), rel.size());
  path[rel.size()] = '\0';
  open_how how{};
  how.flags = O_PATH | O_CLOEXEC;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, root_fd_.get(), path, &how, sizeof(how));
  if (fd < 0) return false;
  struct stat st;
  bool regular = ::fstat(static_cast<int>(fd), &st) == 0 && S_ISREG(st.st_mode);
  ::close(static_cast<int>(fd));
  if (regular) {
    found.resolver = id_;
    found.expires_ms = now + kFoundValidMs;
    found.name.assign(script_name);
  }
  return regular;
}

bool ScriptResolver::resolve(std::string_view path, Arena& arena, ScriptMatch& out) const {
  out = ScriptMatch{};
  if (path.empty() || path.front() != '/') return false;
  // The first ".php" segment splits the path: "/a.php/b/c" runs /a.php with PATH_INFO /b/c.
  size_t start = 1;
  bool tried = false;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    if (isPhpSegment(path.substr(start, end - start))) {
      tried = true;
      if (isScript(path.substr(0, end))) {
        out.script_name = path.substr(0, end);
        out.path_info = path.substr(end);
        return true;
      }
      break;
    }
    start = end + 1;
  }
  if (!tried && path.back() == '/' && !index_.empty()) {
    char* joined = arena.allocate(path.size() + index_.size());
    std::memcpy(joined, path.data(), path.size());
    std::memcpy(joined + path.size(), index_.data(), index_.size());
    std::string_view script(joined, path.size() + index_.size());
    if (isScript(script)) {
      out.script_name = script;
      return true;
    }
  }
  if (!front_controller_.empty() && isScript(front_controller_)) {
    out.script_name = front_controller_;
    out.front_controller = true;
    return true;
  }
  return false;
}

}  // namespace scalws::worker::fastcgi
