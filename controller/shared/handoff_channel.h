// A hand-off channel: the socketpair between a shared address's fronts and one worker loop
// of an instance there. The front holds the sending end (copies, one per front process),
// the worker loop the receiving end; the controller keeps both, so a worker that dies
// leaves its queued connections to be handed on (see shared_address.h) and a front that
// dies is replaced with the same channels.
//
// SOCK_SEQPACKET: each hand-off is one message (one byte and one descriptor), so several
// fronts may send on copies of one end without interleaving. The receiving end is
// autobound to an abstract name; getpeername() of a sending end says that name, which is how
// a controller that restarted pairs the ends it copies from a front with the ends it copies
// from the workers — from the kernel, not from what either process reports. The name is
// bound but never listens, so nobody can connect to it.
#pragma once

#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::controller {

struct HandoffChannel {
  common::UniqueFd send;     // the fronts' end
  common::UniqueFd receive;  // the worker loop's end

  static common::Result<HandoffChannel> make();
};

// The abstract name of a channel's receiving end (hex), from either end: the end's own name
// (receiving end) or its peer's (sending end). "" when the socket is not such an end.
std::string receivingEndName(int receive_fd);
std::string sendingEndPeer(int send_fd);

// Whether `fd` is a unix seqpacket socket (what a channel end must be).
bool isChannelEnd(int fd);

}  // namespace scalws::controller
