#include "common/auth/htpasswd.h"

#include <crypt.h>
#include <openssl/crypto.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>

namespace scalws::common::auth {

namespace {

constexpr std::array<std::string_view, 5> kAcceptedPrefixes = {"$2y$", "$2b$", "$2a$", "$5$",
                                                               "$6$"};

bool accepted(std::string_view hash) {
  for (std::string_view p : kAcceptedPrefixes) {
    if (hash.rfind(p, 0) == 0) return true;
  }
  return false;
}

Status at(std::string_view origin, size_t line, size_t col, const std::string& what) {
  return invalidArgument(std::string(origin) + ":" + std::to_string(line) + ":" +
                         std::to_string(col) + ": " + what);
}

// The hash `password` gives with the settings (salt, cost) of `hash`, compared in constant
// time with it.
bool matches(std::string_view password, const std::string& hash) {
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: not on a thread pool's stack
  std::memset(data.get(), 0, sizeof(crypt_data));
  std::string pw(password);
  const char* out = crypt_r(pw.c_str(), hash.c_str(), data.get());
  OPENSSL_cleanse(pw.data(), pw.size());
  // libxcrypt returns a string starting with '*' on failure (never a valid hash).
  if (out == nullptr || out[0] == '*' || std::strlen(out) != hash.size()) return false;
  return CRYPTO_memcmp(out, hash.data(), hash.size()) == 0;
}

// crypt(3)'s alphabet for salts and checksums.
bool cryptAlphabet(std::string_view text) {
  for (char c : text) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '/';
    if (!ok) return false;
  }
  return !text.empty();
}

// A whole hash, not only its settings: the settings as libxcrypt takes them, then a checksum
// of the method's length. Checked by its shape, not by hashing: a file of many users (or a
// high bcrypt cost) must not make loading, or a reload, take seconds.
bool complete(const std::string& hash) {
  // libxcrypt calls SHA-256-crypt "legacy" (not for new hashes); it is still sound.
  int salt = crypt_checksalt(hash.c_str());
  if (salt != CRYPT_SALT_OK && salt != CRYPT_SALT_METHOD_LEGACY) return false;
  std::string_view h = hash;
  if (h[1] == '2') {
    // "$2y$NN$" then 22 characters of salt and 31 of checksum.
    return h.size() == 60 && h[6] == '$' && cryptAlphabet(h.substr(7));
  }
  // "$5$" or "$6$", an optional "rounds=N$", a salt of up to 16 characters, "$", the checksum.
  size_t last = h.rfind('$');
  size_t salt_start = h.find('$', 1) + 1;
  std::string_view rest = h.substr(salt_start, last - salt_start);
  if (rest.starts_with("rounds=")) rest = rest.substr(rest.find('$') + 1);
  size_t checksum = h[1] == '5' ? 43 : 86;
  return last > salt_start && rest.size() <= 16 && cryptAlphabet(rest) &&
         h.size() - last - 1 == checksum && cryptAlphabet(h.substr(last + 1));
}

int base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

std::optional<std::string> base64Decode(std::string_view in) {
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  size_t pad = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '=') {
      if (i + 2 < in.size()) return std::nullopt;  // '=' only in the last two places
      ++pad;
      continue;
    }
    int v = base64Value(in[i]);
    if (v < 0 || pad > 0) return std::nullopt;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

}  // namespace

Result<Htpasswd> Htpasswd::parse(std::string_view text, std::string_view origin) {
  Htpasswd out;
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? "" : text.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty() || line.front() == '#') continue;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) return at(origin, line_no, 1, "expected user:hash");
    if (colon == 0) return at(origin, line_no, 1, "empty user name");
    std::string_view user = line.substr(0, colon);
    std::string_view hash = line.substr(colon + 1);
    // htpasswd files may carry more fields after the hash; crypt strings have no ':'.
    hash = hash.substr(0, hash.find(':'));
    if (!accepted(hash)) {
      return at(origin, line_no, colon + 2,
                "the hash of '" + std::string(user) +
                    "' is neither bcrypt ($2y$) nor SHA-crypt ($5$, $6$); plain text, $apr1$ "
                    "and {SHA} are refused (make one with `htpasswd -B` or `mkpasswd -m "
                    "sha-512`)");
    }
    if (!complete(std::string(hash))) {
      return at(origin, line_no, colon + 2, "malformed hash for '" + std::string(user) + "'");
    }
    for (const Entry& e : out.entries_) {
      if (e.user == user) return at(origin, line_no, 1, "'" + e.user + "' is listed twice");
    }
    out.entries_.push_back({std::string(user), std::string(hash)});
  }
  if (out.entries_.empty()) {
    return invalidArgument(std::string(origin) + ":1:1: no user:hash line");
  }
  return out;
}

Result<Htpasswd> Htpasswd::load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return errnoStatus(errno, "cannot read \"" + path + "\"");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path);
}

bool Htpasswd::check(std::string_view user, std::string_view password) const {
  const Entry* found = nullptr;
  for (const Entry& e : entries_) {
    if (e.user == user) found = &e;
  }
  if (found == nullptr) {
    (void)matches(password, entries_.front().hash);  // the same cost as a known user
    return false;
  }
  return matches(password, found->hash);
}

std::optional<std::pair<std::string, std::string>> basicCredentials(
    std::string_view authorization) {
  size_t sp = authorization.find(' ');
  if (sp != 5) return std::nullopt;
  std::string scheme(authorization.substr(0, 5));
  for (char& c : scheme) c = static_cast<char>(c | 0x20);
  if (scheme != "basic") return std::nullopt;
  std::string_view token = authorization.substr(6);
  while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
  std::optional<std::string> decoded = base64Decode(token);
  if (!decoded) return std::nullopt;
  size_t colon = decoded->find(':');  // RFC 7617 §2: the user-id cannot contain a colon
  if (colon == std::string::npos) return std::nullopt;
  return std::make_pair(decoded->substr(0, colon), decoded->substr(colon + 1));
}

}  // namespace scalws::common::auth
