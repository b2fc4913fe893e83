// The seccomp allow-list of a worker after start: one table, one line per syscall (or per
// argument variant), each with the reason it is there.
//
// A syscall that appears with argument checks is allowed only when one of its entries
// matches (entries with the same name are alternatives; the up to three checks within one
// entry must all hold). Everything not in the table gets the policy's SeccompAction; the few
// syscalls in seccompErrnoList() fail with a chosen errno instead, so libc can fall back. To allow
// one more syscall, add one line to the table in seccomp_allow_list.cpp.
#pragma once

#include <array>
#include <cstdint>
#include <span>

namespace scalws::sandbox {

struct ArgCheck {
  enum class Op : uint8_t {
    kNone,       // no check
    kMaskedEq,   // (arg & mask) == value
    kEqSelfPid,  // (arg & 0xffffffff) == getpid() of the process loading the filter
  };
  Op op = Op::kNone;
  uint8_t arg = 0;  // argument index, 0-based
  uint64_t mask = 0;
  uint64_t value = 0;
};

struct SyscallAllowance {
  const char* name;
  std::array<ArgCheck, 3> checks;  // all must hold; unused ones are Op::kNone
  bool onlyWithUnixConnect;        // allowed only when the policy says unixConnect
  const char* why;
  bool onlyWithUdpDatagrams = false;  // allowed only when the policy says udpDatagrams
};

struct SyscallErrno {
  const char* name;
  int error;
  const char* why;
};

std::span<const SyscallAllowance> seccompAllowList();
std::span<const SyscallErrno> seccompErrnoList();
// Syscalls that must never be allowed (a test checks the table against it): exec, fork,
// ptrace, mount, bpf, keyctl, perf_event_open, io_uring, bind/listen, id changes...
std::span<const char* const> seccompNeverAllowed();

}  // namespace scalws::sandbox
