// The static handler's own lexical checks on a request path, on top of the engine's
// normalizePath (defence in depth: the kernel's RESOLVE_BENEATH is the last line, these
// are the first), and the Location of a directory redirect.
#pragma once

#include <string_view>

#include "worker/http/arena.h"

namespace scalws::worker {

enum class StaticPathVerdict {
  kOk,
  kDotfile,  // a segment starts with '.': 404 unless allow_dotfiles
  kInvalid,  // not a normalized path (NUL, '\', "." or ".." segment, "//", too long): 400
};

struct StaticPath {
  StaticPathVerdict verdict = StaticPathVerdict::kInvalid;
  std::string_view relative;  // without the leading '/'; "" for "/"
  bool directory = false;     // ends with '/': a directory's index is asked for
};

// `path` is Request::path (decoded, normalized). Dotfiles are ".git", ".env", ".htpasswd",
// "..." — any segment starting with '.' — except a first segment ".well-known" (RFC 8615:
// meant to be public; ACME challenges live there); dotfiles beneath it are still refused.
StaticPath checkStaticPath(std::string_view path, bool allow_dotfiles);

// "Location" for the redirect of "/dir" to "/dir/": the decoded path re-encoded (every
// byte outside RFC 3986 pchar and '/' as %XX, so the value is a safe path-absolute
// reference, never "//host"), then "?query" when one was sent. Lives in `arena`.
std::string_view directoryRedirectLocation(std::string_view path, std::string_view query,
                                           Arena& arena);

}  // namespace scalws::worker
