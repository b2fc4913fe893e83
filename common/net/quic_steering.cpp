#include "common/net/quic_steering.h"

#include <sys/socket.h>

#include <cerrno>

#include "common/net/listen_socket.h"

namespace scalws::common::net {
namespace {

constexpr sock_filter stmt(uint16_t code, uint32_t k) {
  return sock_filter{code, 0, 0, k};
}
constexpr sock_filter jump(uint16_t code, uint32_t k, uint8_t jt, uint8_t jf) {
  return sock_filter{code, jt, jf, k};
}

}  // namespace

std::vector<sock_filter> steeringProgram() {
  return {
      // 0: A = first byte; the header form is its top bit.
      stmt(BPF_LD | BPF_B | BPF_ABS, 0),
      // 1: long header → 4, short header → 2.
      jump(BPF_JMP | BPF_JSET | BPF_K, 0x80, 2, 0),
      // 2-3: short header: the DCID starts right after the first byte.
      stmt(BPF_LD | BPF_H | BPF_ABS, 1),
      stmt(BPF_RET | BPF_A, 0),
      // 4: long header: byte 5 is the DCID length (after 4 bytes of version).
      stmt(BPF_LD | BPF_B | BPF_ABS, 5),
      // 5: shorter than our two steering bytes → the hash.
      jump(BPF_JMP | BPF_JGE | BPF_K, 2, 0, 2),
      // 6-7: the DCID's first two bytes.
      stmt(BPF_LD | BPF_H | BPF_ABS, 6),
      stmt(BPF_RET | BPF_A, 0),
      // 8: any index past the group's last socket makes the kernel use its hash.
      stmt(BPF_RET | BPF_K, 0xffffffffu),
  };
}

std::vector<sock_filter> firstSocketProgram() {
  return {stmt(BPF_RET | BPF_K, 0)};
}

namespace {

Status attachProgram(int fd, std::vector<sock_filter> program) {
  sock_fprog prog{static_cast<unsigned short>(program.size()), program.data()};
  if (::setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof(prog)) != 0) {
    return errnoStatus(errno, "SO_ATTACH_REUSEPORT_CBPF");
  }
  return okStatus();
}

}  // namespace

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
