// The seccomp allow-list of a front (front/), the process that takes the connections of an
// address several instances share and hands each to its instance's worker. It holds
// client sockets and never reads past their first bytes: it may accept on the listener it
// was given, peek, move a descriptor to a worker (sendmsg with SCM_RIGHTS), answer a
// refusal, close, and talk to the controller. It may not open a file, make a socket,
// connect, bind, map executable memory, start a thread or a process: none of that is in
// the list, so a front taken over by a crafted ClientHello still reaches no file, no host
// and no other process. Same table shape as the worker's (seccomp_allow_list.h).
#pragma once

#include <span>

#include "sandbox/seccomp_allow_list.h"

namespace scalws::sandbox {

std::span<const SyscallAllowance> seccompFrontAllowList();

}  // namespace scalws::sandbox
