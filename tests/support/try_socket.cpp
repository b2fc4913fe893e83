#include "tests/support/try_socket.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace scalws::testing {

int trySocket(int family, int type, int protocol) {
  int fd = socket(family, type | SOCK_CLOEXEC, protocol);
  if (fd < 0) return errno;
  close(fd);
  return 0;
}

}  // namespace scalws::testing
