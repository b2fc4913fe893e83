// Status and Result<T>: the error values of ScalWS (no exceptions past start-up).
//
// A Status is cheap when ok (no allocation); an error carries a code and a message that
// says what failed in words an operator can act on. Result<T> holds either a T or an
// error Status; reading the value of an error Result is a bug (asserted).
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace scalws::common {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller's input is wrong (bad bytes, bad config, bad frame)
  kNotFound,
  kAlreadyExists,
  kPermissionDenied,
  kResourceExhausted,  // a limit was hit (fds, memory, queue, size)
  kFailedPrecondition,
  kUnavailable,  // a peer cannot be reached now (ECONNREFUSED, pool down)
  kTimeout,
  kIoError,
  kInternal,
};

std::string_view statusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status okStatus() { return Status(); }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

  // "message" when ok()==false, "ok" otherwise.
  std::string toString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

inline Status okStatus() {
  return Status();
}
inline Status invalidArgument(std::string m) {
  return Status(StatusCode::kInvalidArgument, std::move(m));
}
inline Status notFound(std::string m) {
  return Status(StatusCode::kNotFound, std::move(m));
}
inline Status internalError(std::string m) {
  return Status(StatusCode::kInternal, std::move(m));
}

// A Status for a failed syscall: "what: strerror(err)", code chosen from errno.
Status errnoStatus(int err, std::string_view what);

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "a Result built from a Status must be an error");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return ok(); }

  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }

  T& value() & {
    assert(ok());
    return std::get<T>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<T>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<T>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace scalws::common

// Propagates an error Status from an expression that yields a Status.
#define SCALWS_RETURN_IF_ERROR(expr)                  \
  do {                                                \
    ::scalws::common::Status scalws_status_ = (expr); \
    if (!scalws_status_.ok()) return scalws_status_;  \
  } while (0)

#define SCALWS_STATUS_CONCAT_INNER_(a, b) a##b
#define SCALWS_STATUS_CONCAT_(a, b) SCALWS_STATUS_CONCAT_INNER_(a, b)

// Evaluates `expr` (a Result<T>); on error returns its Status from the enclosing function,
// else moves the value into `lhs` (a declaration or an lvalue):
//   SCALWS_ASSIGN_OR_RETURN(std::string name, stringField(args, "name"));
#define SCALWS_ASSIGN_OR_RETURN(lhs, expr) \
  SCALWS_ASSIGN_OR_RETURN_IMPL_(SCALWS_STATUS_CONCAT_(scalws_result_, __LINE__), lhs, expr)
#define SCALWS_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                                  \
  if (!result.ok()) return result.status();              \
  lhs = std::move(result).value()
