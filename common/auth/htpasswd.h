// Htpasswd: an htpasswd-style credentials file, as the dashboard (`--dashboard-auth FILE`)
// and a route's `auth` read it: one `user:hash` a line; blank lines and lines starting
// with '#' are skipped.
//
// Hashes are crypt(3) strings checked with libcrypt's crypt_r (libxcrypt on Debian 12):
// bcrypt ("$2y$", "$2b$", "$2a$", as `htpasswd -B` writes) and SHA-crypt ("$5$", "$6$", as
// `mkpasswd -m sha-512` writes). Anything else is refused when the file is read, naming
// file:line:col: plain text, Apache's "$apr1$" MD5 and "{SHA}" are too weak to keep a
// password from whoever reads the file. A user named twice, an empty user and a file with
// no user are refused too.
//
// check() costs what the hash asks for (bcrypt cost 10: tens of milliseconds): call it off
// the event loop. It is const and reentrant, so a shared_ptr<const Htpasswd> may be read
// by the thread pool while the loop goes on.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"

namespace scalws::common::auth {

class Htpasswd {
 public:
  struct Entry {
    std::string user;
    std::string hash;
  };

  // `origin` names the text in errors (the file's path).
  static Result<Htpasswd> parse(std::string_view text, std::string_view origin);
  // Reads and parses the file; a file that cannot be read names `path`.
  static Result<Htpasswd> load(const std::string& path);

  // True when `user` is listed and `password` hashes to its hash. An unknown user costs a
  // hash too, so timing does not tell which users exist.
  bool check(std::string_view user, std::string_view password) const;

  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
};

// The user and password of an `Authorization: Basic <base64(user:password)>` value
// (RFC 7617 §2; the scheme is case-insensitive); nullopt when it is not one.
std::optional<std::pair<std::string, std::string>> basicCredentials(std::string_view authorization);

}  // namespace scalws::common::auth
