#include "worker/tls/openssl_errors.h"

#include <openssl/err.h>

namespace scalws::worker::tls {

std::string takeOpensslErrors() {
  std::string out;
  unsigned long e;
  while ((e = ERR_get_error()) != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof(buf));
    if (!out.empty()) out += "; ";
    out += buf;
  }
  return out.empty() ? "unknown OpenSSL error" : out;
}

}  // namespace scalws::worker::tls
