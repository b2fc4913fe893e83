// A loopback TCP port for tests that need to listen somewhere.
#pragma once

#include <cstdint>

namespace scalws::testing {

// A port nobody listens on right now (bound to 0 on 127.0.0.1, read back, closed).
uint16_t freePort();

}  // namespace scalws::testing
