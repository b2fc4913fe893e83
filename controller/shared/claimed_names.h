// The host names a [[listen]] claims on an address it shares with other instances: its
// `names` when given; else, on a TLS listener, the names of each of its certificates (the
// certificate's own `names`, else the DNS names in the certificate file: subjectAltName,
// or the common name when there is none, RFC 6125 §6.4.4); else none. Lower-case, sorted,
// each once. The controller reads the certificate files itself (never a key): it runs as
// root, and a worker's word is never taken for what it claims.
#pragma once

#include <string>
#include <vector>

#include "common/config/site_config.h"
#include "common/status.h"

namespace scalws::controller {

common::Result<std::vector<std::string>> claimedNames(const common::config::ListenConfig& listen);

// The DNS names of the first certificate in a PEM file (the leaf).
common::Result<std::vector<std::string>> certificateNames(const std::string& pem_path);

}  // namespace scalws::controller
