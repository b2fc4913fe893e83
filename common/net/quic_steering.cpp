#include "common/net/quic_steering.h"

#include <sys/socket.h>

#include <cerrno>
#include <initializer_list>
#include <span>

#include "common/net/listen_socket.h"

namespace scalws::common::net {
namespace {

constexpr sock_filter stmt(uint16_t code, uint32_t k) {
  return sock_filter{code, 0, 0, k};
}
constexpr sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  return sock_filter{code, jt, jf, k};
}

// 0-3 of both programs: a short header goes to the socket its DCID's first two bytes name
// (they follow the first byte); a long header jumps to 4.
constexpr sock_filter kShortHeaderById[] = {
    // A = first byte; the header form is its top bit.
    stmt(BPF_LD | BPF_B | BPF_ABS, 0),
    jump(BPF_JMP | BPF_JSET | BPF_K, 0x80, 2, 0),
    stmt(BPF_LD | BPF_H | BPF_ABS, 1),
    stmt(BPF_RET | BPF_A, 0),
};

// A long header to the socket its DCID's first two bytes name: byte 5 is the DCID length
// (after 4 bytes of version), the DCID follows. A DCID shorter than our two steering bytes,
// and any index past the group's last socket, make the kernel use its hash.
constexpr sock_filter kLongHeaderById[] = {
    stmt(BPF_LD | BPF_B | BPF_ABS, 5),  jump(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 2),
    stmt(BPF_LD | BPF_H | BPF_ABS, 6),  stmt(BPF_RET | BPF_A, 0),
    stmt(BPF_RET | BPF_K, 0xffffffffu),
};

void append(std::vector<sock_filter>& program, std::span<const sock_filter> block) {
  program.insert(program.end(), block.begin(), block.end());
}
void append(std::vector<sock_filter>& program, std::initializer_list<sock_filter> block) {
  program.insert(program.end(), block.begin(), block.end());
}

}  // namespace

std::vector<sock_filter> steeringProgram() {
  std::vector<sock_filter> p;
  append(p, kShortHeaderById);  // 0-3
  append(p, kLongHeaderById);   // 4-8
  return p;
}

std::vector<sock_filter> generationSteeringProgram(const std::vector<uint16_t>& current) {
  const auto n = static_cast<uint32_t>(current.size());
  std::vector<sock_filter> p;
  append(p, kShortHeaderById);  // 0-3
  append(p, {
                // 4-5: long header of another version than 1 (types mean other things
                // there) → 9.
                stmt(BPF_LD | BPF_W | BPF_ABS, 1),
                jump(BPF_JMP | BPF_JEQ | BPF_K, 1, 0, 3),
                // 6-8: QUIC v1: a Handshake packet carries our ID → 9; Initial and 0-RTT → 14.
                stmt(BPF_LD | BPF_B | BPF_ABS, 0),
                stmt(BPF_ALU | BPF_AND | BPF_K, 0x30),
                jump(BPF_JMP | BPF_JEQ | BPF_K, 0x20, 0, 5),
            });
  append(p, kLongHeaderById);  // 9-13
  append(p, {
                // 14-16: Initial or 0-RTT: a DCID shorter than 4 bytes (no client's) →
                // current[0].
                stmt(BPF_LD | BPF_B | BPF_ABS, 5),
                jump(BPF_JMP | BPF_JGE | BPF_K, 4, 1, 0),
                stmt(BPF_RET | BPF_K, current[0]),
                // 17: the DCID's first two bytes: one of the current sockets keeps it (a
                // client's later Initials carry the ID that socket gave).
                stmt(BPF_LD | BPF_H | BPF_ABS, 6),
            });
  for (uint16_t id : current) {
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, id, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, id));
  }
  // Else the client chose it: its bytes 2-3 pick a current socket, the same one for every
  // packet with that DCID (retransmitted Initials, 0-RTT).
  p.push_back(stmt(BPF_LD | BPF_H | BPF_ABS, 8));
  p.push_back(stmt(BPF_ALU | BPF_MOD | BPF_K, n));
  for (uint32_t k = 0; k < n; ++k) {
    p.push_back(jump(BPF_JMP | BPF_JEQ | BPF_K, k, 0, 1));
    p.push_back(stmt(BPF_RET | BPF_K, current[k]));
  }
  p.push_back(stmt(BPF_RET | BPF_K, current[0]));
  return p;
}

std::vector<sock_filter> firstSocketProgram() {
  return {stmt(BPF_RET | BPF_K, 0)};
}

Status attachProgram(int fd, std::vector<sock_filter> program) {
  sock_fprog prog{static_cast<unsigned short>(program.size()), program.data()};
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) != 0) {
    return errnoStatus(errno, "SO_ATTACH_REUSEPORT_CBPF");
  }
  return okStatus();
}

Status attachSteeringProgram(int fd) {
  return attachProgram(fd, steeringProgram());
}

namespace {

// A UDP socket of the listen address's reuseport group, carrying `program` for the group.
Result<UniqueFd> bindWithProgram(const config::ListenConfig& listen,
                                 std::vector<sock_filter> program) {
  Result<UniqueFd> fd = bindUdpSocket(listen);
  if (!fd.ok()) return fd.status();
  Status attached = attachProgram(fd->get(), std::move(program));
  if (!attached.ok()) {
    return internalError(listen.where.toString() + ": " + listen.address +
                         " (UDP): " + attached.message());
  }
  return fd;
}

}  // namespace

Result<UniqueFd> bindSharedGroupSocket(const config::ListenConfig& listen) {
  return bindWithProgram(listen, firstSocketProgram());
}

Result<UniqueFd> bindSteeredSocket(const config::ListenConfig& listen) {
  // Attaching again replaces the group's program with the same one: every socket can carry
  // it, so whichever binds first sets it up.
  return bindWithProgram(listen, steeringProgram());
}

}  // namespace scalws::common::net
