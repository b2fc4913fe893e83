#include "sandbox/seccomp_allow_list.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "sandbox/seccomp_arg_checks.h"

namespace scalws::sandbox {
namespace {

constexpr SyscallAllowance allow(const char* name, const char* why) {
  return {name, {}, false, why};
}
constexpr SyscallAllowance allowIf(const char* name, ArgCheck a, const char* why) {
  return {name, {a}, false, why};
}
constexpr SyscallAllowance allowIf(const char* name, ArgCheck a, ArgCheck b, const char* why) {
  return {name, {a, b}, false, why};
}
constexpr SyscallAllowance allowIf(const char* name, ArgCheck a, ArgCheck b, ArgCheck c,
                                   const char* why) {
  return {name, {a, b, c}, false, why};
}
constexpr SyscallAllowance withUnixConnect(SyscallAllowance entry) {
  entry.onlyWithUnixConnect = true;
  return entry;
}
constexpr SyscallAllowance withUdpDatagrams(SyscallAllowance entry) {
  entry.onlyWithUdpDatagrams = true;
  return entry;
}

// A thread, not a process: CLONE_THREAD set and no namespace flag. glibc's pthread_create
// passes CLONE_VM|CLONE_FS|CLONE_FILES|CLONE_SIGHAND|CLONE_THREAD|... ; fork() passes
// SIGCHLD without CLONE_THREAD and so fails EPERM.
constexpr uint64_t kCloneNamespaces = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC |
                                      CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;
constexpr ArgCheck kThreadFlags = masked(0, CLONE_THREAD | kCloneNamespaces, CLONE_THREAD);
// socket(2)'s type carries SOCK_NONBLOCK/SOCK_CLOEXEC above the low 4 bits.
constexpr ArgCheck kStreamType = masked(1, 0xf, SOCK_STREAM);
// An AF_INET/AF_INET6 stream socket is TCP only with protocol 0 or IPPROTO_TCP. Landlock's
// port rules (LANDLOCK_ACCESS_NET_CONNECT_TCP) apply to TCP sockets only, and since kernel
// 6.14 an IPPROTO_MPTCP (or IPPROTO_SCTP) stream socket is not one to it: such a socket
// would connect to any host and port.
constexpr ArgCheck kProtocolDefault = eq32(2, 0);
constexpr ArgCheck kProtocolTcp = eq32(2, IPPROTO_TCP);
// MSG_FASTOPEN makes sendto/sendmsg on an unconnected TCP socket connect it from inside
// tcp_sendmsg, without the connect() security hook Landlock enforces its port rules in. The
// flags are sendto's and sendmmsg's 4th argument and sendmsg's 3rd.
constexpr ArgCheck noFastOpen(uint8_t arg) {
  return masked(arg, MSG_FASTOPEN, 0);
}
// fcntl: only the descriptor-flag and status-flag commands (libuv's fallbacks for O_NONBLOCK
// and FD_CLOEXEC, F_GETFL of an inherited descriptor) and F_DUPFD_CLOEXEC. Refused among
// others: F_SETOWN/F_SETOWN_EX/F_SETSIG (SIGIO, SIGURG or any signal sent to another
// process of our uid, where Landlock's signal scoping is missing: kernels before 6.12),
// F_SETLEASE and F_NOTIFY (signals again), F_SETLK* (locks on shared files), F_SETPIPE_SZ,
// F_ADD_SEALS. F_SETFL may not set O_ASYNC, the other half of signal-driven I/O.
constexpr ArgCheck fcntlCommand(int command) {
  return eq32(1, static_cast<uint64_t>(command));
}

// clang-format off
constexpr std::array kAllowList = {
    // --- I/O on descriptors the worker holds ---
    allow("read", "sockets, pipes, eventfds, files"),
    allow("write", "sockets, pipes, the log"),
    allow("readv", "scatter reads"),
    allow("writev", "a response leaves in one writev"),
    allow("pread64", "static files at an offset, /proc/self/status read-back"),
    allow("pwrite64", "cache files"),
    allow("preadv", "static files at an offset"),
    allow("preadv2", "static files at an offset"),
    allow("pwritev", "cache files"),
    allow("pwritev2", "cache files"),
    allow("sendfile", "large static files"),
    allow("fadvise64", "read-ahead hints for sendfile"),
    allow("lseek", "file offsets"),
    allow("close", "every descriptor"),
    allow("dup", "libuv and OpenSSL duplicate descriptors"),
    allow("dup3", "libuv and OpenSSL duplicate descriptors"),
    allowIf("fcntl", fcntlCommand(F_GETFD), "libuv: close-on-exec flag (fallback path)"),
    allowIf("fcntl", fcntlCommand(F_SETFD), "libuv: close-on-exec flag (fallback path)"),
    allowIf("fcntl", fcntlCommand(F_GETFL), "libuv: status flags of a descriptor"),
    allowIf("fcntl", fcntlCommand(F_SETFL), masked(2, O_ASYNC, 0),
            "libuv: O_NONBLOCK (fallback path), never O_ASYNC"),
    allowIf("fcntl", fcntlCommand(F_DUPFD_CLOEXEC), "duplicate a descriptor, like dup3"),
    allowIf("ioctl", eq32(1, FIONREAD), "libuv: bytes pending on a socket"),
    allowIf("ioctl", eq32(1, FIONBIO), "libuv: non-blocking mode"),
    allowIf("ioctl", eq32(1, FIOCLEX), "libuv: close-on-exec"),
    allowIf("ioctl", eq32(1, FIONCLEX), "libuv: close-on-exec"),
    allow("pipe2", "libuv async wake-ups and signal pipe"),
    allow("eventfd2", "libuv async wake-ups"),

    // --- event loop and timers ---
    allow("epoll_create1", "a loop created after start"),
    allow("epoll_ctl", "watch and unwatch descriptors"),
    allow("epoll_wait", "the loop"),
    allow("epoll_pwait", "the loop"),
    allow("epoll_pwait2", "the loop"),
    allow("poll", "libuv checks a single descriptor"),
    allow("ppoll", "libuv checks a single descriptor"),
    allow("timerfd_create", "timers"),
    allow("timerfd_settime", "timers"),
    allow("timerfd_gettime", "timers"),
    allow("clock_gettime", "time when the vDSO is not used"),
    allow("clock_getres", "time resolution"),
    allow("gettimeofday", "time when the vDSO is not used"),
    allow("nanosleep", "back-off sleeps"),
    allow("clock_nanosleep", "back-off sleeps"),

    // --- sockets (Landlock limits TCP connect to the configured ports) ---
    allowIf("socket", eq32(0, AF_INET), kStreamType, kProtocolDefault,
            "TCP to upstreams and PHP-FPM"),
    allowIf("socket", eq32(0, AF_INET), kStreamType, kProtocolTcp,
            "TCP to upstreams and PHP-FPM"),
    allowIf("socket", eq32(0, AF_INET6), kStreamType, kProtocolDefault,
            "TCP to upstreams and PHP-FPM"),
    allowIf("socket", eq32(0, AF_INET6), kStreamType, kProtocolTcp,
            "TCP to upstreams and PHP-FPM"),
    withUnixConnect(allowIf("socket", eq32(0, AF_UNIX), kStreamType,
                            "PHP-FPM or an upstream on a unix socket")),
    allow("socketpair", "in-process channels between loops"),
    allow("connect", "upstreams, PHP-FPM"),
    allow("accept4", "clients on the inherited listeners"),
    allow("shutdown", "half-close"),
    allow("getsockopt", "SO_ERROR after a non-blocking connect"),
    // Never SO_ATTACH_REUSEPORT_*: a worker's UDP socket may sit in a group other
    // instances' workers share (common/net/quic_steering.h), whose program it would replace.
    allowIf("setsockopt", eq32(1, SOL_SOCKET), eq32(2, SO_RCVBUF), "buffer sizes"),
    allowIf("setsockopt", eq32(1, SOL_SOCKET), eq32(2, SO_SNDBUF), "buffer sizes"),
    allowIf("setsockopt", eq32(1, SOL_SOCKET), eq32(2, SO_KEEPALIVE), "keep-alive"),
    allowIf("setsockopt", eq32(1, SOL_SOCKET), eq32(2, SO_LINGER), "a reset instead of a FIN"),
    allowIf("setsockopt", eq32(1, IPPROTO_TCP), "TCP_NODELAY, keep-alive timing"),
    allowIf("setsockopt", eq32(1, IPPROTO_IP), "UDP pktinfo, ECN, MTU discovery"),
    allowIf("setsockopt", eq32(1, IPPROTO_IPV6), "UDP pktinfo, traffic class, MTU discovery"),
    allowIf("setsockopt", eq32(1, IPPROTO_UDP), "UDP segmentation offload"),
    allow("getsockname", "local address for logs and X-Forwarded headers"),
    allow("getpeername", "client address"),
    allowIf("sendto", noFastOpen(3), "send on connected sockets, never MSG_FASTOPEN"),
    allow("recvfrom", "receive on connected sockets"),
    allowIf("sendmsg", noFastOpen(2),
            "IPC frames with SCM_RIGHTS; HTTP/3 datagrams (GSO, source address); never "
            "MSG_FASTOPEN"),
    allow("recvmsg", "IPC frames with SCM_RIGHTS"),
    allowIf("sendmmsg", noFastOpen(3), "batched sends, never MSG_FASTOPEN"),
    withUdpDatagrams(allow("recvmmsg", "HTTP/3: datagrams from the UDP listener in batches")),

    // --- files (Landlock decides which paths) ---
    allow("openat", "static files beneath the docroot dirfds, cache files"),
    allow("openat2", "RESOLVE_BENEATH opens of static files"),
    allow("fstat", "open-file cache identity"),
    allow("newfstatat", "stat of a path or an fd"),
    allow("statx", "open-file cache check mode"),
    allow("getdents64", "directory listings"),
    allow("readlink", "glibc and OpenSSL path lookups"),
    allow("readlinkat", "glibc and OpenSSL path lookups"),
    allow("ftruncate", "cache files"),
    allow("fsync", "cache files"),
    allow("fdatasync", "cache files"),
    allow("mkdirat", "cache directories"),
    allow("mkdir", "cache directories (legacy call)"),
    allow("unlinkat", "cache eviction, temp files"),
    allow("unlink", "cache eviction (legacy call)"),
    allow("rmdir", "cache eviction (legacy call)"),
    allow("renameat", "cache files published atomically"),
    allow("renameat2", "cache files published atomically"),
    allow("rename", "cache files published atomically (legacy call)"),

    // --- memory ---
    allow("brk", "malloc"),
    allow("mmap", "malloc, thread stacks, file maps"),
    allow("munmap", "malloc, thread stacks"),
    allow("mremap", "realloc of large blocks"),
    allow("mprotect", "thread stack guard pages"),
    allow("madvise", "malloc returns memory, thread exit"),

    // --- signals ---
    allow("rt_sigaction", "signal handlers"),
    allow("rt_sigprocmask", "signal masks, thread creation"),
    allow("rt_sigreturn", "return from a handler"),
    allow("sigaltstack", "crash handler stack"),
    allowIf("tgkill", selfPid(0), "raise()/abort() on our own threads only"),

    // --- threads ("single" mode loops) and process ---
    allowIf("clone", kThreadFlags, "pthread_create: threads only, never a process"),
    allow("futex", "mutexes, condition variables, thread join"),
    allow("set_robust_list", "every new thread"),
    allow("rseq", "every new thread (glibc registers restartable sequences)"),
    allow("sched_yield", "spin back-off"),
    allow("sched_getaffinity", "CPU count"),
    allow("getcpu", "sched_getcpu"),
    allow("restart_syscall", "interrupted sleeps"),
    allow("exit", "thread exit"),
    allow("exit_group", "process exit"),
    allowIf("prctl", eq32(0, PR_SET_NAME), "thread names"),
    allowIf("prctl", eq32(0, PR_GET_NAME), "thread names"),
    allowIf("prlimit64", eq32(0, 0), eq64(2, 0), "getrlimit: read our own limits, never set"),
    allow("getrusage", "CPU time for metrics"),

    // --- identity and system facts (read-only) ---
    allow("getpid", "logs"),
    allow("gettid", "logs"),
    allow("getppid", "parent-death checks"),
    allow("getuid", "libc"),
    allow("geteuid", "libc, OpenSSL"),
    allow("getgid", "libc"),
    allow("getegid", "libc, OpenSSL"),
    allow("getresuid", "sandbox self-check"),
    allow("getresgid", "sandbox self-check"),
    allow("getgroups", "sandbox self-check"),
    allow("uname", "libc, OpenSSL"),
    allow("getrandom", "OpenSSL, hash seeds"),
};

constexpr std::array kErrnoList = {
    // clone3 passes its flags in a struct in memory, which a seccomp filter cannot read, so
    // it cannot be limited to threads. glibc (2.34+) tries clone3 first and falls back to
    // clone on ENOSYS; clone's flags are a register we check (kThreadFlags).
    SyscallErrno{"clone3", ENOSYS, "makes glibc fall back to clone, whose flags are checked"},
};

constexpr std::array kNeverAllowed = {
    "execve", "execveat", "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "bpf", "keyctl", "add_key",
    "request_key", "perf_event_open", "io_uring_setup", "io_uring_enter", "io_uring_register",
    "bind", "listen", "kill", "tkill", "setuid", "setgid", "setgroups", "setresuid",
    "setresgid", "init_module", "finit_module", "kexec_load", "userfaultfd", "memfd_create",
    "personality", "seccomp", "landlock_create_ruleset", "landlock_restrict_self",
};
// clang-format on

}  // namespace

std::span<const SyscallAllowance> seccompAllowList() {
  return kAllowList;
}
std::span<const SyscallErrno> seccompErrnoList() {
  return kErrnoList;
}
std::span<const char* const> seccompNeverAllowed() {
  return kNeverAllowed;
}

}  // namespace scalws::sandbox
