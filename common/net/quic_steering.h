// The classic BPF program of a UDP reuseport group (SO_ATTACH_REUSEPORT_CBPF) that sends
// each QUIC packet to the socket named in its destination connection ID, so several
// processes (multi mode) or loops (single mode) share one UDP port without losing track of
// their connections when a client's address changes.
//
// The kernel runs it on the UDP payload and uses the value returned as an index into the
// group (sockets in the order they joined it); an index past the last socket falls back to
// the kernel's 4-tuple hash. The program returns:
//   - short header (RFC 9000 §17.3): bytes 1-2, the start of the DCID;
//   - long header (§17.2): bytes 6-7 when the DCID is at least 2 bytes long, else the hash.
// A client's first Initial carries a DCID it chose at random, so it lands on whatever
// socket those bytes or the hash pick, and keeps landing there for as long as the client
// uses that DCID; once it uses one of ours (worker/quic/connection_id.h) it reaches our
// socket exactly.
// A packet too short to read makes the kernel's loader return 0: socket 0 drops it.
//
// Attached once per group (any member's fd will do), before the sandbox — the worker's
// seccomp filter allows no bpf() and its sockets stay as they were set up.
#pragma once

#include <linux/filter.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"
#include "common/unique_fd.h"

namespace scalws::common::net {

std::vector<sock_filter> steeringProgram();
Status attachSteeringProgram(int fd);

// The program of a group whose sockets serve two generations of processes at once, as
// when standalone multi mode reloads: the new workers read sockets of their own while the
// old ones drain theirs. Short-header and Handshake packets go to the socket their DCID
// names, so each generation keeps its connections. Initial and 0-RTT packets go to one of
// `current` (the new generation's steering ids, not empty): to the one the DCID names if
// it is among them, else to the one bytes 2-3 of the client's DCID pick, so a new
// connection never lands on a draining process. Long headers of other QUIC versions are
// steered as by steeringProgram.
std::vector<sock_filter> generationSteeringProgram(const std::vector<uint16_t>& current);
// At most this many sockets in a group steered by generation (a bound on reload storms).
inline constexpr size_t kMaxSteeringSockets = 4096;
// Replaces the program of the reuseport group `fd` is in.
Status attachProgram(int fd, std::vector<sock_filter> program);

// The program of a shared address's group (common/net/quic_route.h): every datagram goes
// to the group's first socket, the front's, which passes each on by its connection ID. The
// workers' sockets in the group only send. The first socket keeps its place for as long as
// it is open (the kernel fills a closed socket's place with the last one), so the
// controller keeps a copy of it beside the front's.
std::vector<sock_filter> firstSocketProgram();
// Binds the first socket of a shared address's group with firstSocketProgram attached.
Result<UniqueFd> bindSharedGroupSocket(const config::ListenConfig& listen);
// The next socket of the listener's UDP group (bindUdpSocket) with the program attached:
// the group's steering id of the socket is the number of sockets bound to the address
// before it (while none of those is closed).
Result<UniqueFd> bindSteeredSocket(const config::ListenConfig& listen);

}  // namespace scalws::common::net
