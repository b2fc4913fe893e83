// Message: one IPC frame's content, typed.
//
// On the wire a message is a JSON object:
//   request       {"v":1,"id":N,"op":"config","args":{...}}        N >= 1: a reply is expected
//   notification  {"v":1,"id":0,"op":"metrics","args":{...}}       id 0: no reply, ever
//   reply         {"v":1,"id":N,"result":{...}}
//   error reply   {"v":1,"id":N,"error":{"code":"not_found","message":"..."}}
// A request may carry "fds":K (1..kMaxFdsPerFrame): K descriptors ride as SCM_RIGHTS with
// the frame's bytes (ipc/fd_passing.h). Replies never carry fds. An error reply with id 0
// means the peer could not read what it got (bad frame, version) and is closing.
// Unknown extra fields are ignored, so a newer peer may add some within version 1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/status.h"

namespace scalws::ipc {

using Json = nlohmann::json;

inline constexpr int kProtocolVersion = 1;
inline constexpr size_t kMaxFdsPerFrame = 64;
inline constexpr size_t kMaxOpNameLength = 64;

// Wire error codes (the "code" of an error reply).
namespace errc {
inline constexpr std::string_view kBadFrame = "bad_frame";
inline constexpr std::string_view kUnknownOp = "unknown_op";
inline constexpr std::string_view kUnsupportedVersion = "unsupported_version";
inline constexpr std::string_view kPermissionDenied = "permission_denied";
inline constexpr std::string_view kInvalidArgument = "invalid_argument";
inline constexpr std::string_view kNotFound = "not_found";
inline constexpr std::string_view kConflict = "conflict";
inline constexpr std::string_view kFailed = "failed";
inline constexpr std::string_view kInternal = "internal";
}  // namespace errc

enum class MessageKind { kRequest, kReply };

struct Message {
  int version = kProtocolVersion;
  uint64_t id = 0;  // requests: 0 = notification; replies: the request's id (0: connection error)
  MessageKind kind = MessageKind::kRequest;
  // Requests only.
  std::string op;
  Json args = Json::object();
  size_t fd_count = 0;    // "fds": descriptors that arrived with this frame
  size_t wire_bytes = 0;  // the frame's payload size, when it was received (not on the wire)
  // Replies only: `result` when error_code is empty, else the error.
  Json result;
  std::string error_code;
  std::string error_message;

  bool isNotification() const { return kind == MessageKind::kRequest && id == 0; }
  bool isError() const { return kind == MessageKind::kReply && !error_code.empty(); }
};

Message makeRequest(uint64_t id, std::string op, Json args, size_t fd_count = 0);
Message makeReply(uint64_t id, Json result);
Message makeErrorReply(uint64_t id, std::string_view code, std::string message);

// Request args as callers give them: null (`{}` in a call) becomes an empty object;
// anything else that is not an object is kInvalidArgument.
common::Status normalizeArgs(Json& args);

// The wire JSON of a message. Never throws.
Json toJson(const Message& message);

// Validates a decoded JSON value. Errors: kFailedPrecondition for a version other than
// kProtocolVersion (wire code unsupported_version), kInvalidArgument for anything else
// (bad_frame): not an object, missing or wrong-typed v/id/op/args/fds/result/error, both
// or neither of op and result/error, an empty or over-long op name.
common::Result<Message> messageFromJson(const Json& json);

// Parses a frame payload: JSON (rejected when nested deeper than 64 levels, so no later
// recursive walk can exhaust the stack) then messageFromJson. Never throws.
common::Result<Message> parseMessage(std::string_view payload);

// The wire code for an error from parseMessage/messageFromJson/FrameDecoder.
std::string_view wireCodeForParseError(const common::Status& status);

// Error replies <-> Status. A peer's error reply becomes Status(statusCodeForWire(code),
// message); a handler's Status becomes an error reply with wireCodeForStatus(code).
// invalid_argument/bad_frame<->kInvalidArgument, not_found/unknown_op<->kNotFound,
// conflict<->kAlreadyExists, permission_denied<->kPermissionDenied, internal<->kInternal,
// anything else <-> failed/kFailedPrecondition (and kUnavailable, kTimeout... -> failed).
common::StatusCode statusCodeForWire(std::string_view code);
std::string_view wireCodeForStatus(common::StatusCode code);

// Field accessors for handlers reading args without exceptions. Missing or wrong-typed
// fields are kInvalidArgument errors naming the field.
common::Result<std::string> stringField(const Json& object, std::string_view key);
common::Result<uint64_t> uintField(const Json& object, std::string_view key);
common::Result<bool> boolField(const Json& object, std::string_view key);
// The same for optional fields: absent gives `fallback`, present must have the right type.
common::Result<std::string> optionalString(const Json& object, std::string_view key,
                                           std::string_view fallback);
common::Result<uint64_t> optionalUint(const Json& object, std::string_view key, uint64_t fallback);
common::Result<bool> optionalBool(const Json& object, std::string_view key, bool fallback);

}  // namespace scalws::ipc
