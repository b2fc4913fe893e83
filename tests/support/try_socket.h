// Opens and closes a socket to see whether the running process may (sandbox tests).
#pragma once

namespace scalws::testing {

// 0 when socket() succeeded (and closes it), errno otherwise.
int trySocket(int family, int type, int protocol = 0);

}  // namespace scalws::testing
