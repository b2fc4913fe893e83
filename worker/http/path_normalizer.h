// Turns a request path as sent into the one every route and the static handler use:
// percent-decoded once, slashes merged, "." and ".." resolved lexically.
//
// Refused (ok == false → 400): a decoded NUL, an encoded slash (%2F would turn one segment
// into two after decoding), a backslash raw or encoded, a malformed escape, a path that
// does not start with "/", and ".." climbing above the root. The common case — nothing to
// decode or resolve — returns a view of the input without copying.
#pragma once

#include <string_view>

#include "worker/http/arena.h"

namespace scalws::worker {

struct PathNormalization {
  bool ok = false;
  std::string_view path;
  const char* error = "";
};

PathNormalization normalizePath(std::string_view raw, Arena& arena);

}  // namespace scalws::worker
