#include "controller/instances/ticket_secret.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.h"

namespace scalws::controller {
namespace {

constexpr size_t kSecretBytes = 32;
constexpr const char* kFileName = "/tls-ticket.secret";
constexpr std::string_view kLabel = "scalws instance ticket secret\n";

common::Status writeNewSecret(const std::string& path) {
  std::string secret(kSecretBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(secret.data()), kSecretBytes) != 1) {
    return common::internalError("no randomness for " + path);
  }
  std::string tmp = path + ".tmp";
  common::UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) return common::errnoStatus(errno, "cannot create " + tmp);
  ssize_t n = ::write(fd.get(), secret.data(), secret.size());
  if (n != static_cast<ssize_t>(secret.size()) || ::fsync(fd.get()) != 0) {
    int err = n < 0 ? errno : EIO;
    ::unlink(tmp.c_str());
    return common::errnoStatus(err, "cannot write " + tmp);
  }
  // A crash between the two leaves no half-written secret under the real name.
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return common::errnoStatus(err, "cannot rename " + tmp);
  }
  return common::okStatus();
}

}  // namespace

common::Result<std::string> loadOrCreateHostTicketSecret(const std::string& state_dir) {
  std::string path = state_dir + kFileName;
  if (::access(path.c_str(), F_OK) != 0) {
    if (errno != ENOENT) return common::errnoStatus(errno, "cannot look at " + path);
    SCALWS_RETURN_IF_ERROR(writeNewSecret(path));
  }
  common::UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (!fd) return common::errnoStatus(errno, "cannot open " + path);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return common::errnoStatus(errno, "cannot stat " + path);
  if ((st.st_mode & 077) != 0) {
    return common::invalidArgument(path + " is readable by others than its owner (chmod 600)");
  }
  std::string secret(256, '\0');
  ssize_t n = ::read(fd.get(), secret.data(), secret.size());
  if (n < 0) return common::errnoStatus(errno, "cannot read " + path);
  if (static_cast<size_t>(n) < kSecretBytes) {
    return common::invalidArgument(path + " holds fewer than 32 bytes; remove it to make anew");
  }
  secret.resize(static_cast<size_t>(n));
  return secret;
}

std::string instanceTicketSecret(const std::string& host_secret, const std::string& instance) {
  std::string message(kLabel);
  message += instance;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), host_secret.data(), static_cast<int>(host_secret.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &len);
  return std::string(reinterpret_cast<const char*>(out), len);
}

}  // namespace scalws::controller
