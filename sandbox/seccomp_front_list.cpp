#include "sandbox/seccomp_front_list.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <array>

#include "sandbox/seccomp_arg_checks.h"

namespace scalws::sandbox {
namespace {

constexpr SyscallAllowance frontAllow(const char* name, const char* why) {
  return {name, {}, false, why};
}
constexpr SyscallAllowance frontAllowIf(const char* name, ArgCheck a, const char* why) {
  return {name, {a}, false, why};
}
constexpr SyscallAllowance frontAllowIf(const char* name, ArgCheck a, ArgCheck b, const char* why) {
  return {name, {a, b}, false, why};
}

// MSG_FASTOPEN would connect an unconnected socket: sendto's and sendmsg's flags never
// carry it here (the worker's list explains the hole it opens).
constexpr ArgCheck frontNoFastOpen(uint8_t arg) {
  return masked(arg, MSG_FASTOPEN, 0);
}

// clang-format off
constexpr std::array kFrontAllowList = {
    // --- descriptors it holds: the listener, clients, the controller channel, hand-offs ---
    frontAllow("read", "the controller channel, libuv's wake-up pipe and eventfd"),
    frontAllow("write", "the log, libuv's wake-ups"),
    frontAllow("close", "clients once handed over or refused"),
    frontAllow("dup3", "a new stderr from a re-attached controller"),
    frontAllowIf("fcntl", eq32(1, F_GETFL), "libuv: status flags"),
    frontAllowIf("fcntl", eq32(1, F_SETFL), masked(2, O_ASYNC, 0), "libuv: O_NONBLOCK, never O_ASYNC"),
    frontAllowIf("ioctl", eq32(1, FIONBIO), "libuv: non-blocking mode"),
    frontAllowIf("ioctl", eq32(1, FIONREAD), "libuv: bytes pending"),
    frontAllow("accept4", "clients on the listener it was given"),
    frontAllow("recvfrom", "MSG_PEEK of a ClientHello or a request head; draining a refused one"),
    frontAllowIf("sendto", frontNoFastOpen(3), "a refusal (TLS alert, 421 page) to a client"),
    frontAllow("recvmsg", "controller frames with SCM_RIGHTS"),
    frontAllow("recvmmsg", "QUIC datagrams from the address's UDP socket, in batches"),
    frontAllowIf("sendmmsg", frontNoFastOpen(3), "QUIC datagrams to a worker loop, in batches"),
    frontAllowIf("sendmsg", frontNoFastOpen(2),
            "a client's descriptor to a worker (SCM_RIGHTS); controller frames"),
    frontAllow("shutdown", "half-close after a refusal"),
    frontAllow("getsockopt", "SO_ERROR of a client socket"),

    // --- the event loop ---
    frontAllow("epoll_ctl", "watch clients still sending their first bytes"),
    frontAllow("epoll_wait", "the loop"),
    frontAllow("epoll_pwait", "the loop"),
    frontAllow("epoll_pwait2", "the loop"),
    frontAllow("clock_gettime", "time when the vDSO is not used"),
    frontAllow("clock_getres", "time resolution"),
    frontAllow("gettimeofday", "time when the vDSO is not used"),

    // --- memory (never executable) ---
    frontAllow("brk", "malloc"),
    frontAllowIf("mmap", masked(2, PROT_EXEC, 0), "malloc, never executable"),
    frontAllow("munmap", "malloc"),
    frontAllow("mremap", "realloc of large blocks"),
    frontAllowIf("mprotect", masked(2, PROT_EXEC, 0), "malloc arenas, never executable"),
    frontAllow("madvise", "malloc returns memory"),

    // --- signals and the process ---
    frontAllow("rt_sigaction", "signal handlers"),
    frontAllow("rt_sigprocmask", "signal masks"),
    frontAllow("rt_sigreturn", "return from a handler"),
    frontAllowIf("tgkill", selfPid(0), "raise()/abort() on itself only"),
    frontAllow("futex", "libc locks"),
    frontAllow("restart_syscall", "interrupted calls"),
    frontAllow("exit", "thread exit"),
    frontAllow("exit_group", "process exit"),
    frontAllow("getpid", "logs"),
    frontAllow("gettid", "logs"),
    frontAllow("getrandom", "hash seeds"),
    frontAllow("pread64", "the sandbox's read-back of /proc/self/status (opened before)"),
};
// clang-format on

}  // namespace

std::span<const SyscallAllowance> seccompFrontAllowList() {
  return kFrontAllowList;
}

}  // namespace scalws::sandbox
