#include "worker/tls/ticket_keys.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "common/hkdf.h"

namespace scalws::worker::tls {
namespace {

constexpr std::string_view kSaltPrefix = "scalws session ticket key v1\0";
constexpr size_t kMaxSecretFile = 4096;

}  // namespace

TicketKeyRing::TicketKeyRing(std::string secret, std::string label, uint64_t period_ms)
    : secret_(std::move(secret)), label_(std::move(label)), period_ms_(period_ms ? period_ms : 1) {}

common::Result<TicketKey> TicketKeyRing::derive(std::string_view secret, std::string_view label,
                                                uint64_t window) {
  // RFC 5869: the salt separates listeners (so a ticket from one cannot resume on another),
  // the info names the window; one 80-byte expansion gives name, AES and HMAC keys.
  std::string salt(kSaltPrefix);
  salt.append(label);
  uint8_t info[8];
  for (int i = 0; i < 8; ++i) info[i] = static_cast<uint8_t>(window >> (56 - 8 * i));

  uint8_t out[16 + 32 + 32];
  common::Status derived = common::hkdfSha256(
      secret, salt, std::string_view(reinterpret_cast<const char*>(info), sizeof(info)), out);
  if (!derived.ok()) return derived;
  TicketKey key;
  std::memcpy(key.name.data(), out, 16);
  std::memcpy(key.aes.data(), out + 16, 32);
  std::memcpy(key.hmac.data(), out + 48, 32);
  OPENSSL_cleanse(out, sizeof(out));
  return key;
}

bool TicketKeyRing::keyFor(uint64_t window, TicketKey& out) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (int i = 0; i < 2; ++i) {
    if (cached_window_[i] == window) {
      out = cached_key_[i];
      return true;
    }
  }
  common::Result<TicketKey> key = derive(secret_, label_, window);
  if (!key.ok()) return false;
  // Keep the newer window in slot 0: lookups ask for the current and the previous one.
  int slot = (cached_window_[0] != UINT64_MAX && window < cached_window_[0]) ? 1 : 0;
  if (slot == 0) {
    cached_window_[1] = cached_window_[0];
    cached_key_[1] = cached_key_[0];
  }
  cached_window_[slot] = window;
  cached_key_[slot] = *key;
  out = *key;
  return true;
}

bool TicketKeyRing::encryptionKey(uint64_t unix_ms, TicketKey& out) const {
  return keyFor(windowAt(unix_ms), out);
}

int TicketKeyRing::decryptionKey(const uint8_t* name, uint64_t unix_ms, TicketKey& out) const {
  uint64_t window = windowAt(unix_ms);
  if (keyFor(window, out) && std::memcmp(out.name.data(), name, 16) == 0) return 1;
  if (window > 0 && keyFor(window - 1, out) && std::memcmp(out.name.data(), name, 16) == 0) {
    return 2;
  }
  return 0;
}

namespace {

std::mutex secret_mutex;
std::string process_secret;  // guarded by secret_mutex until first answered, then fixed
bool secret_answered = false;

}  // namespace

const std::string& processTicketSecret() {
  std::lock_guard<std::mutex> lock(secret_mutex);
  if (!secret_answered) {
    if (process_secret.empty()) {
      process_secret.assign(32, '\0');
      if (RAND_bytes(reinterpret_cast<unsigned char*>(process_secret.data()), 32) != 1 &&
          getentropy(process_secret.data(), 32) != 0) {
        // Tickets sealed with a guessable key could be forged: better not to start.
        std::abort();
      }
    }
    secret_answered = true;
  }
  return process_secret;
}

bool adoptProcessTicketSecret(std::string secret) {
  std::lock_guard<std::mutex> lock(secret_mutex);
  if (secret_answered || secret.size() < TicketKeyRing::kMinSecret) return false;
  process_secret = std::move(secret);
  return true;
}

common::Result<std::string> readTicketSecretFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return common::errnoStatus(errno, "cannot open ticket key file " + path);
  std::string data(kMaxSecretFile + 1, '\0');
  size_t len = 0;
  while (len < data.size()) {
    ssize_t n = ::read(fd, data.data() + len, data.size() - len);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  ::close(fd);
  if (len > kMaxSecretFile) {
    return common::invalidArgument("ticket key file " + path + " is larger than 4 KiB");
  }
  if (len < TicketKeyRing::kMinSecret) {
    return common::invalidArgument("ticket key file " + path + " holds " + std::to_string(len) +
                                   " bytes; at least 32 random bytes are needed (e.g. "
                                   "`openssl rand 48 > " +
                                   path + "`)");
  }
  data.resize(len);
  return data;
}

uint64_t unixTimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1'000'000;
}

}  // namespace scalws::worker::tls
