// The FastCGI 1.0 record layer: types, flags and the 8-byte header every record starts with
// (FastCGI specification §3.3). Shared by the parser and the serialiser; no I/O here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace scalws::worker::fastcgi {

inline constexpr uint8_t kVersion1 = 1;
inline constexpr size_t kHeaderSize = 8;
inline constexpr size_t kMaxContent = 65535;  // contentLength is 16 bits
// The one request id this worker uses: a pool connection carries one request at a time
// (PHP-FPM does not multiplex), so ids only need to tell a request from management records.
inline constexpr uint16_t kRequestId = 1;

enum class RecordType : uint8_t {
  kBeginRequest = 1,
  kAbortRequest = 2,
  kEndRequest = 3,
  kParams = 4,
  kStdin = 5,
  kStdout = 6,
  kStderr = 7,
  kData = 8,
  kGetValues = 9,
  kGetValuesResult = 10,
  kUnknownType = 11,
};

enum class Role : uint16_t { kResponder = 1 };
inline constexpr uint8_t kKeepConn = 1;  // BEGIN_REQUEST flags: the server keeps the socket

// END_REQUEST protocolStatus.
enum class ProtocolStatus : uint8_t {
  kRequestComplete = 0,
  kCantMpxConn = 1,
  kOverloaded = 2,
  kUnknownRole = 3,
};

struct RecordHeader {
  uint8_t version = kVersion1;
  RecordType type = RecordType::kStdout;
  uint16_t request_id = kRequestId;
  uint16_t content_length = 0;
  uint8_t padding_length = 0;
};

// Writes the 8 header bytes to `out`.
void encodeHeader(const RecordHeader& header, uint8_t* out);
RecordHeader decodeHeader(const uint8_t* in);

}  // namespace scalws::worker::fastcgi
