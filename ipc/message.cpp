#include "ipc/message.h"

#include <utility>

#include "common/quoted.h"

namespace scalws::ipc {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;

constexpr int kMaxJsonDepth = 64;

Status badFrame(std::string what) {
  return common::invalidArgument("ipc: bad frame: " + std::move(what));
}

// Depth of [ and { nesting outside strings. The payload is not yet known to be valid
// JSON; this only has to be right for what the parser would accept.
bool nestedTooDeep(std::string_view text) {
  int depth = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > kMaxJsonDepth) return true;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return false;
}

Result<uint64_t> parseId(const Json& json) {
  auto it = json.find("id");
  if (it == json.end()) return badFrame("missing \"id\"");
  if (!it->is_number_unsigned()) return badFrame("\"id\" must be a non-negative integer");
  return it->get<uint64_t>();
}

Result<Message> parseReply(const Json& json, Message message) {
  message.kind = MessageKind::kReply;
  auto result = json.find("result");
  auto error = json.find("error");
  if ((result == json.end()) == (error == json.end())) {
    return badFrame("a reply needs exactly one of \"result\" and \"error\"");
  }
  if (json.contains("args") || json.contains("fds")) {
    return badFrame("a reply carries neither \"args\" nor \"fds\"");
  }
  if (result != json.end()) {
    message.result = *result;
    return message;
  }
  if (!error->is_object()) return badFrame("\"error\" must be an object");
  auto code = stringField(*error, "code");
  if (!code.ok()) return badFrame("error: " + code.status().message());
  auto text = stringField(*error, "message");
  if (!text.ok()) return badFrame("error: " + text.status().message());
  if (code->empty()) return badFrame("error \"code\" is empty");
  message.error_code = std::move(*code);
  message.error_message = std::move(*text);
  return message;
}

}  // namespace

Message makeRequest(uint64_t id, std::string op, Json args, size_t fd_count) {
  Message m;
  m.id = id;
  m.op = std::move(op);
  m.args = std::move(args);
  m.fd_count = fd_count;
  return m;
}

Message makeReply(uint64_t id, Json result) {
  Message m;
  m.id = id;
  m.kind = MessageKind::kReply;
  m.result = std::move(result);
  return m;
}

Message makeErrorReply(uint64_t id, std::string_view code, std::string message) {
  Message m;
  m.id = id;
  m.kind = MessageKind::kReply;
  m.error_code = std::string(code);
  m.error_message = std::move(message);
  return m;
}

common::Status normalizeArgs(Json& args) {
  if (args.is_null()) args = Json::object();
  if (!args.is_object()) return common::invalidArgument("ipc: args must be a JSON object");
  return common::okStatus();
}

Json toJson(const Message& message) {
  Json json = {{"v", message.version}, {"id", message.id}};
  if (message.kind == MessageKind::kRequest) {
    json["op"] = message.op;
    json["args"] = message.args.is_object() ? message.args : Json::object();
    if (message.fd_count > 0) json["fds"] = message.fd_count;
  } else if (message.isError()) {
    json["error"] = {{"code", message.error_code}, {"message", message.error_message}};
  } else {
    json["result"] = message.result;
  }
  return json;
}

Result<Message> messageFromJson(const Json& json) {
  if (!json.is_object()) return badFrame("not a JSON object");
  auto v = json.find("v");
  if (v == json.end()) return badFrame("missing \"v\"");
  if (!v->is_number_integer()) return badFrame("\"v\" must be an integer");
  if (*v != kProtocolVersion) {
    return Status(StatusCode::kFailedPrecondition, "ipc: unsupported protocol version " +
                                                       v->dump() + " (this side speaks " +
                                                       std::to_string(kProtocolVersion) + ")");
  }
  auto id = parseId(json);
  if (!id.ok()) return id.status();
  Message message;
  message.id = *id;

  auto op = json.find("op");
  if (op == json.end()) {
    if (message.id == 0 && !json.contains("error")) return badFrame("a reply needs an id >= 1");
    return parseReply(json, std::move(message));
  }
  if (json.contains("result") || json.contains("error")) {
    return badFrame("a request carries neither \"result\" nor \"error\"");
  }
  if (!op->is_string()) return badFrame("\"op\" must be a string");
  message.op = op->get<std::string>();
  if (message.op.empty() || message.op.size() > kMaxOpNameLength) {
    return badFrame("\"op\" must be 1 to " + std::to_string(kMaxOpNameLength) + " characters");
  }
  if (auto args = json.find("args"); args != json.end()) {
    if (!args->is_object()) return badFrame("\"args\" must be an object");
    message.args = *args;
  }
  if (auto fds = json.find("fds"); fds != json.end()) {
    if (!fds->is_number_unsigned() || fds->get<uint64_t>() > kMaxFdsPerFrame) {
      return badFrame("\"fds\" must be an integer from 0 to " + std::to_string(kMaxFdsPerFrame));
    }
    message.fd_count = fds->get<size_t>();
  }
  return message;
}

Result<Message> parseMessage(std::string_view payload) {
  if (nestedTooDeep(payload)) {
    return badFrame("JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  }
  Json json = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return badFrame("payload is not valid JSON");
  return messageFromJson(json);
}

std::string_view wireCodeForParseError(const Status& status) {
  return status.code() == StatusCode::kFailedPrecondition ? errc::kUnsupportedVersion
                                                          : errc::kBadFrame;
}

StatusCode statusCodeForWire(std::string_view code) {
  if (code == errc::kInvalidArgument || code == errc::kBadFrame) {
    return StatusCode::kInvalidArgument;
  }
  if (code == errc::kNotFound || code == errc::kUnknownOp) return StatusCode::kNotFound;
  if (code == errc::kConflict) return StatusCode::kAlreadyExists;
  if (code == errc::kPermissionDenied) return StatusCode::kPermissionDenied;
  if (code == errc::kInternal) return StatusCode::kInternal;
  return StatusCode::kFailedPrecondition;
}

std::string_view wireCodeForStatus(StatusCode code) {
  switch (code) {
    case StatusCode::kInvalidArgument:
      return errc::kInvalidArgument;
    case StatusCode::kNotFound:
      return errc::kNotFound;
    case StatusCode::kAlreadyExists:
      return errc::kConflict;
    case StatusCode::kPermissionDenied:
      return errc::kPermissionDenied;
    case StatusCode::kInternal:
      return errc::kInternal;
    default:
      return errc::kFailed;
  }
}

Result<std::string> stringField(const Json& object, std::string_view key) {
  auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end() || !it->is_string()) {
    return common::invalidArgument(common::quoted(key) + " must be a string");
  }
  return it->get<std::string>();
}

Result<uint64_t> uintField(const Json& object, std::string_view key) {
  auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end() || !it->is_number_unsigned()) {
    return common::invalidArgument(common::quoted(key) + " must be a non-negative integer");
  }
  return it->get<uint64_t>();
}

Result<bool> boolField(const Json& object, std::string_view key) {
  auto it = object.is_object() ? object.find(key) : object.end();
  if (it == object.end() || !it->is_boolean()) {
    return common::invalidArgument(common::quoted(key) + " must be true or false");
  }
  return it->get<bool>();
}

Result<std::string> optionalString(const Json& object, std::string_view key,
                                   std::string_view fallback) {
  if (!object.is_object() || !object.contains(key)) return std::string(fallback);
  return stringField(object, key);
}

Result<uint64_t> optionalUint(const Json& object, std::string_view key, uint64_t fallback) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  return uintField(object, key);
}

Result<bool> optionalBool(const Json& object, std::string_view key, bool fallback) {
  if (!object.is_object() || !object.contains(key)) return fallback;
  return boolField(object, key);
}

}  // namespace scalws::ipc
