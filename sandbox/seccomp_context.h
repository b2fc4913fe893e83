// A libseccomp filter context owned like any other resource, and libseccomp's errors as a
// Status.
#pragma once

#include <seccomp.h>

#include <memory>
#include <string>

#include "common/status.h"

namespace scalws::sandbox {

struct SeccompRelease {
  void operator()(void* ctx) const { seccomp_release(ctx); }
};
using SeccompContext = std::unique_ptr<void, SeccompRelease>;

// libseccomp returns -errno.
inline common::Status seccompError(int rc, const std::string& what) {
  return common::errnoStatus(-rc, "seccomp: " + what);
}

}  // namespace scalws::sandbox
