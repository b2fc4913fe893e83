#include "common/status.h"

#include <cerrno>
#include <cstring>

namespace scalws::common {

std::string_view statusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kResourceExhausted:
      return "resource exhausted";
    case StatusCode::kFailedPrecondition:
      return "failed precondition";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kIoError:
      return "i/o error";
    case StatusCode::kInternal:
      return "internal error";
  }
  return "unknown";
}

std::string Status::toString() const {
  return ok() ? std::string("ok") : message_;
}

Status errnoStatus(int err, std::string_view what) {
  StatusCode code = StatusCode::kIoError;
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      code = StatusCode::kNotFound;
      break;
    case EACCES:
    case EPERM:
      code = StatusCode::kPermissionDenied;
      break;
    case EEXIST:
    case EADDRINUSE:
      code = StatusCode::kAlreadyExists;
      break;
    case EMFILE:
    case ENFILE:
    case ENOMEM:
    case ENOBUFS:
    case ENOSPC:
      code = StatusCode::kResourceExhausted;
      break;
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ECONNRESET:
      code = StatusCode::kUnavailable;
      break;
    case ETIMEDOUT:
      code = StatusCode::kTimeout;
      break;
    case EINVAL:
      code = StatusCode::kInvalidArgument;
      break;
    default:
      break;
  }
  std::string message(what);
  message += ": ";
  message += std::strerror(err);
  return Status(code, std::move(message));
}

}  // namespace scalws::common
