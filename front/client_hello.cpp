#include "front/client_hello.h"

#include <cstdint>

#include "common/net/host_name_table.h"

namespace scalws::front {
namespace {

using HelloOutcome = ServerNamePeek::Outcome;

constexpr uint8_t kHandshakeRecord = 22;  // RFC 8446 §5.1 ContentType.handshake
constexpr uint8_t kClientHello = 1;       // §4 HandshakeType.client_hello
constexpr size_t kRecordHeader = 5;
constexpr size_t kMaxRecord = 16 * 1024;  // §5.1: a record's length must not exceed 2^14
constexpr uint16_t kServerNameExtension = 0;
constexpr uint8_t kHostName = 0;  // RFC 6066 §3 NameType.host_name

ServerNamePeek helloResult(HelloOutcome outcome, std::string name = {}) {
  return ServerNamePeek{outcome, std::move(name)};
}

// Bounds-checked big-endian reads over one buffer; any read past the end sets failed().
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  uint32_t u8() { return take(1); }
  uint32_t u16() { return take(2); }
  uint32_t u24() { return take(3); }
  std::string_view bytes(size_t n) {
    if (failed_ || bytes_.size() - pos_ < n) {
      failed_ = true;
      return {};
    }
    std::string_view out = bytes_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  // A vector with a length prefix of `width` bytes (RFC 8446 §3.4), its contents.
  std::string_view vector(size_t width) { return bytes(take(width)); }
  bool failed() const { return failed_; }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  uint32_t take(size_t n) {
    if (failed_ || bytes_.size() - pos_ < n) {
      failed_ = true;
      return 0;
    }
    uint32_t v = 0;
    for (size_t i = 0; i < n; ++i) v = (v << 8) | static_cast<uint8_t>(bytes_[pos_ + i]);
    pos_ += n;
    return v;
  }

  std::string_view bytes_;
  size_t pos_ = 0;
  bool failed_ = false;
};

// RFC 6066 §3: ServerNameList, the first host_name in it.
ServerNamePeek serverNameFrom(std::string_view extension) {
  Reader r(extension);
  std::string_view list = r.vector(2);
  if (r.failed() || !r.done() || list.empty()) return helloResult(HelloOutcome::kInvalid);
  Reader entries(list);
  while (!entries.done()) {
    uint32_t type = entries.u8();
    std::string_view name = entries.vector(2);
    if (entries.failed()) return helloResult(HelloOutcome::kInvalid);
    if (type != kHostName) continue;
    std::string normalized;
    if (!common::net::normalizeHostName(name, normalized))
      return helloResult(HelloOutcome::kInvalid);
    return helloResult(HelloOutcome::kName, std::move(normalized));
  }
  return helloResult(HelloOutcome::kNoName);
}

// RFC 8446 §4.1.2 (and TLS 1.2's, which is the same up to the extensions).
ServerNamePeek parseClientHelloBody(std::string_view body) {
  Reader r(body);
  r.u16();      // legacy_version
  r.bytes(32);  // random
  std::string_view session = r.vector(1);
  std::string_view suites = r.vector(2);
  std::string_view compression = r.vector(1);
  if (r.failed() || session.size() > 32 || suites.size() < 2 || suites.size() % 2 != 0 ||
      compression.empty()) {
    return helloResult(HelloOutcome::kInvalid);
  }
  if (r.done()) return helloResult(HelloOutcome::kNoName);  // a hello without extensions (TLS 1.2)
  std::string_view extensions = r.vector(2);
  if (r.failed() || !r.done()) return helloResult(HelloOutcome::kInvalid);
  Reader e(extensions);
  // §4.2: at most one extension of each type. Only 64 types are tracked by bit; a repeat
  // of any other type is the worker's to refuse, since it does not change the routing.
  uint64_t seen = 0;
  std::string_view server_name;
  bool have_server_name = false;
  while (!e.done()) {
    uint32_t type = e.u16();
    std::string_view data = e.vector(2);
    if (e.failed()) return helloResult(HelloOutcome::kInvalid);
    if (type < 64) {
      if ((seen >> type) & 1) return helloResult(HelloOutcome::kInvalid);
      seen |= uint64_t{1} << type;
    }
    if (type == kServerNameExtension) {
      server_name = data;
      have_server_name = true;
    }
  }
  if (!have_server_name) return helloResult(HelloOutcome::kNoName);
  return serverNameFrom(server_name);
}

}  // namespace

ServerNamePeek peekServerNameInHandshake(std::string_view handshake_bytes) {
  if (handshake_bytes.empty()) return helloResult(HelloOutcome::kNeedMore);
  if (static_cast<uint8_t>(handshake_bytes[0]) != kClientHello) {
    return helloResult(HelloOutcome::kInvalid);
  }
  if (handshake_bytes.size() < 4) return helloResult(HelloOutcome::kNeedMore);
  Reader h(handshake_bytes.substr(1, 3));
  uint32_t body = h.u24();
  if (body > kMaxClientHello) return helloResult(HelloOutcome::kInvalid);
  if (handshake_bytes.size() - 4 < body) return helloResult(HelloOutcome::kNeedMore);
  return parseClientHelloBody(handshake_bytes.substr(4, body));
}

ServerNamePeek peekServerName(std::string_view bytes) {
  // The handshake message may span records: its bytes are the records' payloads in order.
  // The usual hello fits one record and is parsed where it lies; only a fragmented one is
  // copied together.
  std::string assembled;
  std::string_view message;
  size_t offset = 0;
  size_t records = 0;
  while (true) {
    if (bytes.size() - offset < kRecordHeader) {
      // What there is of a header must already be right.
      if (offset < bytes.size() && static_cast<uint8_t>(bytes[offset]) != kHandshakeRecord) {
        return helloResult(HelloOutcome::kInvalid);
      }
      if (bytes.size() - offset >= 2 && static_cast<uint8_t>(bytes[offset + 1]) != 3) {
        return helloResult(HelloOutcome::kInvalid);
      }
      return helloResult(HelloOutcome::kNeedMore);
    }
    Reader header(bytes.substr(offset, kRecordHeader));
    uint32_t type = header.u8();
    uint32_t version = header.u16();
    uint32_t length = header.u16();
    if (type != kHandshakeRecord || (version >> 8) != 3 || length == 0 || length > kMaxRecord ||
        ++records > kMaxHelloRecords) {
      return helloResult(HelloOutcome::kInvalid);
    }
    offset += kRecordHeader;
    size_t available = std::min<size_t>(length, bytes.size() - offset);
    std::string_view payload = bytes.substr(offset, available);
    if (records == 1 && available == length) {
      message = payload;
    } else {
      if (assembled.empty()) assembled.assign(message);  // the first record, parsed in place
      assembled.append(payload);
      message = assembled;
    }
    offset += available;
    ServerNamePeek peek = peekServerNameInHandshake(message);
    if (peek.outcome != HelloOutcome::kNeedMore) return peek;
    if (available < length)
      return helloResult(HelloOutcome::kNeedMore);  // the record is still coming
  }
}

}  // namespace scalws::front
