// scalws-sandbox-cost (bench helper, never installed): what the sandbox adds to each
// system call a worker makes per request, measured without the noise of a whole benchmark.
//
//   scalws-sandbox-cost --config FILE --file PATH [--rounds N] [--calls N]
//
// Four child processes on the caller's CPUs take turns, all running as the site's user:
// one with only the privilege drop, one with the drop and a filter that allows everything,
// one with the drop and our seccomp filter, one inside exactly the sandbox a standalone
// worker of the site enters (drop, Landlock, seccomp).
// Each round, each times N calls of every operation with the vDSO clock; the order rotates
// every round, so a change of the machine's speed lands on all alike. They share the
// descriptors opened before the fork and never use them at the same time. PATH is a file
// beneath one of the site's docroots; the statx and open operations reach it as the static
// handler does (relative to a directory fd; the open through openat2 with RESOLVE_BENEATH).
// Output: one line per operation, the median ns per call of each side and its ratio to the
// drop-only side.
#include <fcntl.h>
#include <linux/openat2.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "sandbox/sandbox.h"
#include "sandbox/seccomp_filter.h"
#include "worker/server/site_runtime.h"
#include "worker/server/worker_sandbox.h"

namespace {

// Everything an operation needs, opened before the sandbox (as the worker opens its
// listeners and docroot dirfds first).
struct Fixture {
  int sock[2] = {-1, -1};  // a connected pair: write on one end, read on the other
  int epfd = -1;           // one readable fd registered: epoll_wait returns at once
  int ready[2] = {-1, -1};
  int dirfd = -1;      // the directory holding the file
  std::string name;    // the file's name beneath dirfd
  char buf[256] = {};  // what the socket operations send and receive
};

bool openFixture(const std::string& file, Fixture& f) {
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, f.sock) != 0) return false;
  if (pipe2(f.ready, O_CLOEXEC) != 0 || write(f.ready[1], "x", 1) != 1) return false;
  f.epfd = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  if (f.epfd < 0 || epoll_ctl(f.epfd, EPOLL_CTL_ADD, f.ready[0], &ev) != 0) return false;
  size_t slash = file.rfind('/');
  if (slash == std::string::npos) return false;
  f.name = file.substr(slash + 1);
  f.dirfd =
      open(slash == 0 ? "/" : file.substr(0, slash).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  return f.dirfd >= 0;
}

enum class Op { kSocketWriteRead, kWritev, kEpollWait, kStatx, kOpenClose, kCount };
constexpr std::array<const char*, static_cast<size_t>(Op::kCount)> kOpNames = {
    "write+read (unix socket, 2 calls)", "writev+read (2 calls)", "epoll_wait (timeout 0)",
    "statx (docroot file)", "openat2+close (docroot file, 2 calls)"};

// Returns false when a call fails: a sandbox that refuses a call the worker makes is a
// finding, never a timing.
bool runOnce(Op op, Fixture& f) {
  char* buf = f.buf;
  switch (op) {
    case Op::kSocketWriteRead:
      return write(f.sock[0], buf, 128) == 128 && read(f.sock[1], buf, sizeof(f.buf)) == 128;
    case Op::kWritev: {
      iovec iov[2] = {{buf, 64}, {buf + 64, 64}};
      return writev(f.sock[0], iov, 2) == 128 && read(f.sock[1], buf, sizeof(f.buf)) == 128;
    }
    case Op::kEpollWait: {
      epoll_event ev;
      return epoll_wait(f.epfd, &ev, 1, 0) == 1;
    }
    case Op::kStatx: {
      struct statx sx;
      return statx(f.dirfd, f.name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS, &sx) == 0;
    }
    case Op::kOpenClose: {
      open_how how{};
      how.flags = O_RDONLY | O_CLOEXEC;
      how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
      int fd = static_cast<int>(syscall(SYS_openat2, f.dirfd, f.name.c_str(), &how, sizeof(how)));
      return fd >= 0 && close(fd) == 0;
    }
    case Op::kCount:
      break;
  }
  return false;
}

using Timings = std::array<double, static_cast<size_t>(Op::kCount)>;  // ns per call

bool timeRound(Fixture& f, int calls, Timings& out) {
  for (size_t i = 0; i < out.size(); ++i) {
    Op op = static_cast<Op>(i);
    auto t0 = std::chrono::steady_clock::now();
    for (int n = 0; n < calls; ++n) {
      if (!runOnce(op, f)) {
        std::fprintf(stderr, "sandbox-cost: %s failed: %s\n", kOpNames[i], strerror(errno));
        return false;
      }
    }
    auto t1 = std::chrono::steady_clock::now();
    out[i] = std::chrono::duration<double, std::nano>(t1 - t0).count() / calls;
  }
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

bool readAll(int fd, void* data, size_t len) {
  auto* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = read(fd, p, len);
    if (n <= 0) return false;
    p += n;
    len -= static_cast<size_t>(n);
  }
  return true;
}

// A measuring child: per token from the parent, one round; its timings go back.
[[noreturn]] void childLoop(Fixture& f, int calls, int from_parent, int to_parent) {
  char token;
  // "r": one round; "q" (or the parent gone): exit. A later sibling inherits this pipe's
  // write end, so end-of-file alone would never come.
  while (read(from_parent, &token, 1) == 1 && token == 'r') {
    Timings t{};
    bool ok = timeRound(f, calls, t);
    if (!ok) t.fill(-1);
    if (write(to_parent, t.data(), sizeof(t)) != static_cast<ssize_t>(sizeof(t))) _exit(1);
  }
  _exit(0);
}

// What a measuring child applies before it times anything. All of them run as the site's
// user: the difference between two columns is one layer's cost.
// kAllowAll loads a filter that allows everything: what any seccomp filter at all costs,
// so the difference to kSeccompOnly is what our allow-list adds on top.
enum class Layers { kDropOnly, kAllowAll, kSeccompOnly, kWhole, kCount };
constexpr std::array<const char*, static_cast<size_t>(Layers::kCount)> kLayerNames = {
    "drop only", "+allow-all filter", "+seccomp", "+landlock+seccomp"};

struct Side {
  pid_t pid = -1;
  int to_child = -1;
  int from_child = -1;
};

scalws::common::Status applyLayers(const scalws::sandbox::SandboxPolicy& policy, Layers layers) {
  scalws::sandbox::SandboxPolicy drop_only = policy;
  drop_only.mode = scalws::sandbox::SandboxMode::kOff;
  if (layers == Layers::kWhole) return scalws::sandbox::applySandbox(policy).status();
  auto dropped = scalws::sandbox::applySandbox(drop_only);
  if (!dropped.ok() || layers == Layers::kDropOnly) return dropped.status();
  if (layers == Layers::kAllowAll) {
    scmp_filter_ctx allow_all = seccomp_init(SCMP_ACT_ALLOW);
    int rc = allow_all == nullptr ? -ENOMEM : seccomp_load(allow_all);
    seccomp_release(allow_all);
    if (rc != 0) return scalws::common::errnoStatus(-rc, "loading an allow-all filter");
    return scalws::common::okStatus();
  }
  scalws::sandbox::SandboxReport report;
  return scalws::sandbox::applySeccomp(policy, report);
}

// Forks a child that applies `layers` of `policy` and then times rounds on request.
Side startSide(const scalws::sandbox::SandboxPolicy& policy, Layers layers, Fixture& f, int calls) {
  int down[2], up[2];
  Side side;
  if (pipe2(down, O_CLOEXEC) != 0 || pipe2(up, O_CLOEXEC) != 0) return side;
  side.pid = fork();
  if (side.pid == 0) {
    scalws::common::Status applied = applyLayers(policy, layers);
    if (!applied.ok()) {
      std::fprintf(stderr, "sandbox: %s\n", applied.message().c_str());
      _exit(1);
    }
    childLoop(f, calls, down[0], up[1]);
  }
  close(down[0]);
  close(up[1]);
  side.to_child = down[1];
  side.from_child = up[0];
  return side;
}

bool runRound(Side& side, Timings& out) {
  if (write(side.to_child, "r", 1) != 1 || !readAll(side.from_child, out.data(), sizeof(out))) {
    std::fprintf(stderr, "sandbox-cost: child %d stopped\n", static_cast<int>(side.pid));
    return false;
  }
  if (out[0] < 0) {
    std::fprintf(stderr, "sandbox-cost: a call failed in child %d\n", static_cast<int>(side.pid));
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::string config, file;
  int rounds = 21, calls = 20000;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string_view arg = argv[i];
    if (arg == "--config")
      config = argv[i + 1];
    else if (arg == "--file")
      file = argv[i + 1];
    else if (arg == "--rounds")
      rounds = std::atoi(argv[i + 1]);
    else if (arg == "--calls")
      calls = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "sandbox-cost: bad argument %s\n", argv[i]);
      return 2;
    }
  }
  if (config.empty() || file.empty() || rounds < 1 || calls < 1 || argc % 2 == 0) {
    std::fprintf(stderr,
                 "usage: scalws-sandbox-cost --config FILE --file PATH [--rounds N] "
                 "[--calls N]\n");
    return 2;
  }
  // A child that could not enter its sandbox has exited: the next token to it must fail
  // with EPIPE and a message, not kill this process silently.
  signal(SIGPIPE, SIG_IGN);
  auto runtime = scalws::worker::prepareSite(config, nullptr);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n", runtime.status().message().c_str());
    return 1;
  }
  Fixture fixture;
  if (!openFixture(file, fixture)) {
    std::fprintf(stderr, "sandbox-cost: setting up %s: %s\n", file.c_str(), strerror(errno));
    return 1;
  }
  auto policy = scalws::worker::sandboxPolicyFor(*runtime->snapshot, config);
  if (!policy.ok()) {
    std::fprintf(stderr, "%s\n", policy.status().message().c_str());
    return 1;
  }
  constexpr size_t kSides = kLayerNames.size();
  std::array<Side, kSides> sides;
  for (size_t k = 0; k < kSides; ++k) {
    sides[k] = startSide(*policy, static_cast<Layers>(k), fixture, calls);
    if (sides[k].pid < 0) return 1;
  }

  // samples[side][op]: ns per call, one per round; ratios[side][op] against the drop-only side.
  std::array<std::vector<std::vector<double>>, kSides> samples, ratios;
  for (size_t k = 0; k < kSides; ++k) {
    samples[k].resize(kOpNames.size());
    ratios[k].resize(kOpNames.size());
  }
  bool ok = true;
  for (int r = 0; r < rounds + 1 && ok; ++r) {  // round 0 warms every side up
    std::array<Timings, kSides> t{};
    // Rotate who goes first, so a trend inside a round favours no side.
    for (size_t j = 0; j < kSides && ok; ++j) {
      size_t k = (j + static_cast<size_t>(r)) % kSides;
      ok = runRound(sides[k], t[k]);
    }
    if (!ok || r == 0) continue;
    for (size_t k = 0; k < kSides; ++k) {
      for (size_t i = 0; i < kOpNames.size(); ++i) {
        samples[k][i].push_back(t[k][i]);
        ratios[k][i].push_back(t[k][i] / t[0][i]);
      }
    }
  }
  for (Side& side : sides) {
    if (write(side.to_child, "q", 1) != 1) kill(side.pid, SIGKILL);
    waitpid(side.pid, nullptr, 0);
  }
  if (!ok) return 1;

  std::printf("ns per call (median of rounds); in brackets the median ratio to \"%s\"\n",
              kLayerNames[0]);
  std::printf("%-40s", "operation");
  for (const char* name : kLayerNames) std::printf(" %22s", name);
  std::printf("\n");
  for (size_t i = 0; i < kOpNames.size(); ++i) {
    std::printf("%-40s %22.1f", kOpNames[i], median(samples[0][i]));
    for (size_t k = 1; k < kSides; ++k) {
      char cell[64];
      std::snprintf(cell, sizeof(cell), "%.1f (%.3f)", median(samples[k][i]), median(ratios[k][i]));
      std::printf(" %22s", cell);
    }
    std::printf("\n");
  }
  std::printf("rounds %d x %d calls per operation\n", rounds, calls);
  return 0;
}
