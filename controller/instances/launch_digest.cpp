#include "controller/instances/launch_digest.h"

#include <openssl/sha.h>

#include "common/hex.h"

namespace scalws::controller {

std::string launchDigest(const ipc::WorkerSettings& settings) {
  // nlohmann's objects keep their keys sorted: the same settings give the same text.
  std::string text =
      ipc::settingsJson(settings).dump(-1, ' ', false, ipc::Json::error_handler_t::replace);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(text.data()), text.size(), digest);
  return common::toHex(std::string_view(reinterpret_cast<const char*>(digest), sizeof(digest)));
}

}  // namespace scalws::controller
