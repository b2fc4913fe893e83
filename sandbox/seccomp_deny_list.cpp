#include "sandbox/seccomp_deny_list.h"

#include <linux/sched.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>

#include "sandbox/seccomp_arg_checks.h"

namespace scalws::sandbox {
namespace {

constexpr SyscallDenial deny(const char* name, const char* why) {
  return {name, {}, EPERM, why};
}
constexpr SyscallDenial denyIf(const char* name, ArgCheck a, const char* why) {
  return {name, {a}, EPERM, why};
}
constexpr SyscallDenial unavailable(const char* name, const char* why) {
  return {name, {}, ENOSYS, why};
}

#ifndef IPPROTO_MPTCP
#define IPPROTO_MPTCP 262
#endif

// clang-format off
constexpr std::array kDenyList = {
    // --- other processes ---
    deny("ptrace", "reading or steering another process"),
    deny("process_vm_readv", "reading another process's memory"),
    deny("process_vm_writev", "writing another process's memory"),
    deny("kcmp", "comparing other processes' kernel objects"),
    deny("pidfd_getfd", "taking a descriptor out of another process"),

    // --- mounts, namespaces and the root ---
    deny("mount", "no app mounts"),
    deny("umount2", "no app unmounts"),
    deny("pivot_root", "no app changes its root"),
    deny("chroot", "no app changes its root"),
    deny("move_mount", "the new mount API"),
    deny("open_tree", "the new mount API"),
    deny("fsopen", "the new mount API"),
    deny("fsconfig", "the new mount API"),
    deny("fsmount", "the new mount API"),
    deny("fspick", "the new mount API"),
    deny("mount_setattr", "the new mount API"),
    deny("unshare", "new namespaces (user namespaces open much of the kernel to the app)"),
    deny("setns", "entering other namespaces"),
    denyIf("clone", hasBits(0, CLONE_NEWUSER), "a process in a new user namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWNS), "a process in a new mount namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWPID), "a process in a new PID namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWNET), "a process in a new network namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWUTS), "a process in a new UTS namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWIPC), "a process in a new IPC namespace"),
    denyIf("clone", hasBits(0, CLONE_NEWCGROUP), "a process in a new cgroup namespace"),
    // clone3 passes its flags in memory a filter cannot read; glibc falls back to clone,
    // whose flags are checked above.
    unavailable("clone3", "makes glibc fall back to clone, whose flags are checked"),

    // --- the kernel's rarer corners ---
    deny("bpf", "eBPF programs and maps"),
    deny("perf_event_open", "performance counters (and a long history of kernel bugs)"),
    deny("userfaultfd", "page-fault handling in user space (a tool of kernel exploits)"),
    unavailable("io_uring_setup", "io_uring bypasses seccomp; libuv falls back on ENOSYS"),
    unavailable("io_uring_enter", "io_uring bypasses seccomp"),
    unavailable("io_uring_register", "io_uring bypasses seccomp"),
    deny("keyctl", "the kernel keyrings"),
    deny("add_key", "the kernel keyrings"),
    deny("request_key", "the kernel keyrings"),
    deny("kexec_load", "loading another kernel"),
    deny("kexec_file_load", "loading another kernel"),
    deny("init_module", "kernel modules"),
    deny("finit_module", "kernel modules"),
    deny("delete_module", "kernel modules"),
    deny("reboot", "rebooting the host"),
    deny("swapon", "swap"),
    deny("swapoff", "swap"),
    deny("acct", "process accounting"),
    deny("quotactl", "disk quotas"),
    deny("syslog", "the kernel log"),
    deny("vhangup", "terminals"),
    deny("iopl", "I/O port access"),
    deny("ioperm", "I/O port access"),
    deny("settimeofday", "the host's clock"),
    deny("clock_settime", "the host's clock"),
    deny("clock_adjtime", "the host's clock"),
    deny("adjtimex", "the host's clock"),
    deny("open_by_handle_at", "opening files by handle, around path checks"),
    deny("name_to_handle_at", "file handles"),
    deny("fanotify_init", "watching the filesystem of others"),
    deny("lookup_dcookie", "profiling"),

    // --- TCP that Landlock's port rules would not see ---
    // Since kernel 6.14 Landlock's CONNECT_TCP rules apply to TCP sockets only: an MPTCP or
    // SCTP stream socket would connect to any port.
    denyIf("socket", eq32(2, IPPROTO_MPTCP), "MPTCP, outside Landlock's TCP rules"),
    denyIf("socket", eq32(2, IPPROTO_SCTP), "SCTP, outside Landlock's TCP rules"),
    // MSG_FASTOPEN connects from inside sendto/sendmsg, without the connect() hook
    // Landlock enforces its port rules in.
    denyIf("sendto", hasBits(3, MSG_FASTOPEN), "TCP fast open connects around Landlock"),
    denyIf("sendmsg", hasBits(2, MSG_FASTOPEN), "TCP fast open connects around Landlock"),
    denyIf("sendmmsg", hasBits(3, MSG_FASTOPEN), "TCP fast open connects around Landlock"),
};
// clang-format on

}  // namespace

std::span<const SyscallDenial> seccompDenyList() {
  return kDenyList;
}

}  // namespace scalws::sandbox
