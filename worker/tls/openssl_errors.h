// OpenSSL's error queue as text, for every context this worker builds (the listeners'
// server contexts, the upstreams' client contexts) and the handshakes that fail on them.
#pragma once

#include <string>

namespace scalws::worker::tls {

// OpenSSL's queued errors of this thread as one line ("reason; reason"), queue cleared.
std::string takeOpensslErrors();

}  // namespace scalws::worker::tls
