#include "worker/handlers/proxy/response_parser.h"

#include <endian.h>

#include <cstdint>
#include <cstring>

#include "worker/http/field_name.h"

namespace scalws::worker::proxy {
namespace {

constexpr uint32_t kMaxSizeDigits = 16;  // 64 bits of hexadecimal

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A byte allowed in a field value, reason phrase or chunk extension once line endings are
// settled: HTAB, SP, VCHAR and obs-text (RFC 9110 §5.5).
bool isFieldByte(unsigned char c) {
  return c == '\t' || (c >= 0x20 && c != 0x7f);
}

// The length of the run of bytes from `data` that are neither a control character nor DEL:
// what most of a head is. Eight bytes a step, as a 64-bit word: a byte below 0x20 or equal
// to 0x7f ends the run (a tab too; the caller takes it byte by byte). In each mask the
// lowest flagged byte is exact (bits above it may be borrows), and it is the one that counts.
size_t plainRun(const char* data, size_t len) {
  constexpr uint64_t kOnes = 0x0101010101010101ULL;
  constexpr uint64_t kHighs = 0x8080808080808080ULL;
  size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    uint64_t w;
    std::memcpy(&w, data + i, 8);
    w = le64toh(w);                                           // the first byte lowest
    uint64_t below_space = (w - kOnes * 0x20) & ~w & kHighs;  // >= 0x80 is obs-text
    uint64_t x = w ^ (kOnes * 0x7f);
    uint64_t del = (x - kOnes) & ~x & kHighs;
    if (uint64_t stop = below_space | del; stop != 0) {
      return i + static_cast<size_t>(__builtin_ctzll(stop) / 8);
    }
  }
  while (i < len) {
    auto c = static_cast<unsigned char>(data[i]);
    if (c < 0x20 || c == 0x7f) break;
    ++i;
  }
  return i;
}

// RFC 9110 §8.6: Content-Length = 1*DIGIT. A list of identical values (a recipient MAY
// accept "5, 5") is one value; anything else is refused.
bool parseContentLength(std::string_view value, bool& seen, uint64_t& out) {
  while (true) {
    size_t comma = value.find(',');
    std::string_view item = trimOws(value.substr(0, comma));
    if (item.empty() || item.size() > 19) return false;
    uint64_t n = 0;
    for (char c : item) {
      if (!isDigit(c)) return false;
      n = n * 10 + static_cast<uint64_t>(c - '0');
    }
    if (seen && n != out) return false;
    seen = true;
    out = n;
    if (comma == std::string_view::npos) return true;
    value.remove_prefix(comma + 1);
  }
}

}  // namespace

ResponseParser::ResponseParser(ResponseParserCallbacks& callbacks, ResponseLimits limits)
    : callbacks_(callbacks), limits_(limits) {
  headers_.reserve(32);
  names_.reserve(32);
}

void ResponseParser::reset(bool head_request) {
  head_request_ = head_request;
  phase_ = Phase::kHead;
  final_head_ = false;
  scanned_ = 0;
  scan_after_cr_ = false;
  scan_line_empty_ = true;
  framing_ = BodyFraming::kNone;
  remaining_ = 0;
  chunk_ = Chunk::kSize;
  size_digits_ = 0;
  chunk_line_ = 0;
  trailer_line_ = 0;
  trailer_bytes_ = 0;
  error_ = "";
}

ResponseParser::Result ResponseParser::fail(const char* why, size_t consumed) {
  phase_ = Phase::kError;
  error_ = why;
  return Result{Outcome::kError, consumed, why};
}

ResponseParser::Result ResponseParser::dispatch(const char* data, size_t len) {
  size_t pos = 0;
  while (true) {
    switch (phase_) {
      case Phase::kError:
        return Result{Outcome::kError, pos, error_};
      case Phase::kDone:
        return Result{Outcome::kComplete, pos, ""};
      case Phase::kUpgraded:
        return Result{Outcome::kUpgrade, pos, ""};
      case Phase::kHead: {
        size_t head_len = scanHead(data + pos, len - pos);
        if (phase_ == Phase::kError) return Result{Outcome::kError, pos, error_};
        if (head_len == 0) return Result{Outcome::kNeedMore, pos, ""};
        if (!parseHead(data + pos, head_len)) return fail(error_, pos);
        pos += head_len;
        scanned_ = 0;
        scan_after_cr_ = false;
        scan_line_empty_ = true;
        // The 101 of an upgrade: what follows is the new protocol's.
        if (phase_ == Phase::kUpgraded) return Result{Outcome::kUpgrade, pos, ""};
        if (phase_ == Phase::kHead) continue;  // an interim 1xx; the final head follows
        if (phase_ == Phase::kDone) return Result{Outcome::kComplete, pos, ""};
        break;
      }
      case Phase::kBody: {
        size_t used = feedBody(data + pos, len - pos);
        pos += used;
        if (phase_ == Phase::kError) return Result{Outcome::kError, pos, error_};
        if (phase_ == Phase::kDone) return Result{Outcome::kComplete, pos, ""};
        return Result{Outcome::kNeedMore, pos, ""};
      }
    }
  }
}

ResponseParser::Result ResponseParser::finishEof() {
  if (phase_ == Phase::kBody && framing_ == BodyFraming::kUntilClose) {
    phase_ = Phase::kDone;
    return Result{Outcome::kComplete, 0, ""};
  }
  if (phase_ == Phase::kDone) return Result{Outcome::kComplete, 0, ""};
  if (phase_ == Phase::kUpgraded) return Result{Outcome::kUpgrade, 0, ""};
  if (phase_ == Phase::kError) return Result{Outcome::kError, 0, error_};
  return fail(phase_ == Phase::kHead ? "the upstream closed the connection before a complete head"
                                     : "the upstream closed the connection in the middle of a body",
              0);
}

size_t ResponseParser::scanHead(const char* data, size_t len) {
  // The state lives in locals while bytes are checked: stores to members through `this`
  // would otherwise be reloaded after every byte (a char may alias them).
  bool after_cr = scan_after_cr_;
  bool line_empty = scan_line_empty_;
  size_t i = scanned_;
  while (i < len) {
    if (after_cr) {
      if (data[i] != '\n') {
        fail("bare CR in the response head", 0);
        return 0;
      }
      ++i;
      after_cr = false;
      if (line_empty) {
        if (i > limits_.max_head) {
          fail("response head too large", 0);
          return 0;
        }
        return i;
      }
      line_empty = true;
      continue;
    }
    size_t run = plainRun(data + i, len - i);
    if (run > 0) {
      line_empty = false;
      i += run;
      continue;
    }
    auto c = static_cast<unsigned char>(data[i]);
    if (c == '\r') {
      after_cr = true;
    } else if (c == '\n') {
      fail("bare LF in the response head", 0);
      return 0;
    } else if (!isFieldByte(c)) {
      fail("control character in the response head", 0);
      return 0;
    } else {
      line_empty = false;  // a tab
    }
    ++i;
  }
  scanned_ = len;
  scan_after_cr_ = after_cr;
  scan_line_empty_ = line_empty;
  if (len > limits_.max_head) fail("response head too large", 0);
  return 0;
}

bool ResponseParser::parseHead(const char* data, size_t len) {
  std::string_view head(data, len - 2);  // without the final empty line's CRLF
  size_t eol = head.find("\r\n");
  std::string_view line = head.substr(0, eol);
  // RFC 9112 §4: status-line = HTTP-version SP status-code SP [ reason-phrase ]. A missing
  // SP before an empty reason is tolerated (common, and unambiguous).
  if (line.size() < 12 || line.substr(0, 7) != "HTTP/1." || (line[7] != '0' && line[7] != '1') ||
      line[8] != ' ' || !isDigit(line[9]) || !isDigit(line[10]) || !isDigit(line[11]) ||
      (line.size() > 12 && line[12] != ' ')) {
    error_ = "malformed status line";
    return false;
  }
  UpstreamResponseHead r;
  r.http10 = line[7] == '0';
  r.status =
      static_cast<uint16_t>((line[9] - '0') * 100 + (line[10] - '0') * 10 + (line[11] - '0'));
  if (r.status < 100 || r.status > 599) {
    error_ = "status code out of range";
    return false;
  }

  headers_.clear();
  names_.clear();
  std::string_view rest = eol == std::string_view::npos ? std::string_view() : head.substr(eol + 2);
  while (!rest.empty()) {
    // scanHead let no CR through without its LF, so a CR is a line's end.
    eol = rest.find('\r');
    size_t line_size = eol == std::string_view::npos ? rest.size() : eol;
    const char* p = rest.data();
    rest = eol == std::string_view::npos ? std::string_view() : rest.substr(eol + 2);
    if (p[0] == ' ' || p[0] == '\t') {
      error_ = "obsolete line folding in the response head";
      return false;
    }
    // The name is a token up to the colon: whitespace before the colon (RFC 9112 §5.1) or
    // no colon at all ends it at another byte.
    size_t colon = 0;
    while (colon < line_size && isTokenChar(static_cast<unsigned char>(p[colon]))) ++colon;
    if (colon == 0 || colon == line_size || p[colon] != ':') {
      error_ = "malformed header field";
      return false;
    }
    if (headers_.size() >= limits_.max_headers) {
      error_ = "too many header fields";
      return false;
    }
    std::string_view name(p, colon);
    headers_.push_back(
        HeaderField{name, trimOws(std::string_view(p + colon + 1, line_size - colon - 1))});
    names_.push_back(classifyFieldName(name));
  }
  r.headers = std::span<const HeaderField>(headers_.data(), headers_.size());
  r.names = std::span<const FieldName>(names_.data(), names_.size());
  if (!decideFraming(r)) return false;

  bool interim = r.status < 200;
  if (!interim) final_head_ = true;
  callbacks_.onResponseHead(r);
  if (r.status == 101) {
    phase_ = Phase::kUpgraded;
    return true;
  }
  if (interim) {
    phase_ = Phase::kHead;
    return true;
  }
  framing_ = r.framing;
  remaining_ = r.framing == BodyFraming::kContentLength ? r.content_length : 0;
  if (framing_ == BodyFraming::kNone ||
      (framing_ == BodyFraming::kContentLength && remaining_ == 0)) {
    phase_ = Phase::kDone;
  } else {
    phase_ = Phase::kBody;
  }
  return true;
}

bool ResponseParser::decideFraming(UpstreamResponseHead& r) {
  bool has_te = false;
  bool chunked = false;
  size_t codings = 0;
  bool close = false;
  bool keep_alive_token = false;
  for (size_t i = 0; i < r.headers.size(); ++i) {
    const HeaderField& h = r.headers[i];
    FieldName known = r.names[i];
    if (known == FieldName::kContentLength) {
      if (!parseContentLength(h.value, r.has_content_length, r.content_length)) {
        error_ = "invalid or differing Content-Length";
        return false;
      }
    } else if (known == FieldName::kTransferEncoding) {
      has_te = true;
      std::string_view list = h.value;
      while (true) {
        size_t comma = list.find(',');
        std::string_view item = trimOws(list.substr(0, comma));
        if (!item.empty()) {
          ++codings;
          chunked = equalsIgnoreCase(item, "chunked");
        }
        if (comma == std::string_view::npos) break;
        list.remove_prefix(comma + 1);
      }
    } else if (known == FieldName::kConnection) {
      close = close || headerListContains(h.value, "close");
      keep_alive_token = keep_alive_token || headerListContains(h.value, "keep-alive");
    }
  }
  (void)keep_alive_token;  // HTTP/1.0 upstreams are never kept, whatever they offer
  bool interim = r.status < 200;
  bool no_content = r.status == 204 || r.status == 304;
  if (interim && (has_te || r.has_content_length)) {
    error_ = "framing fields on a 1xx response";
    return false;
  }
  if (has_te) {
    // RFC 9112 §6.1: a server must not send Transfer-Encoding to an HTTP/1.0 request (we
    // send 1.1), nor in a 204 or 304 (RFC 9110 §15.3.5, §15.4.5); with Content-Length the
    // message is a smuggling attempt either way (RFC 9112 §6.3).
    if (r.http10) {
      error_ = "Transfer-Encoding in an HTTP/1.0 response";
      return false;
    }
    if (r.has_content_length) {
      error_ = "both Content-Length and Transfer-Encoding";
      return false;
    }
    if (no_content) {
      error_ = "Transfer-Encoding on a 204 or 304 response";
      return false;
    }
    if (codings != 1 || !chunked) {
      error_ = "unsupported transfer coding";
      return false;
    }
  }
  // RFC 9110 §8.6: a server must not send Content-Length in a 204.
  if (r.status == 204 && r.has_content_length && r.content_length != 0) {
    error_ = "Content-Length on a 204 response";
    return false;
  }
  if (interim || no_content || head_request_) {
    r.framing = BodyFraming::kNone;
  } else if (has_te) {
    r.framing = BodyFraming::kChunked;
  } else if (r.has_content_length) {
    r.framing = BodyFraming::kContentLength;
  } else {
    r.framing = BodyFraming::kUntilClose;
  }
  r.keep_alive = !r.http10 && !close && r.framing != BodyFraming::kUntilClose;
  return true;
}

size_t ResponseParser::feedBody(const char* data, size_t len) {
  switch (framing_) {
    case BodyFraming::kUntilClose:
      if (len > 0) callbacks_.onResponseBody(std::string_view(data, len));
      return len;
    case BodyFraming::kContentLength: {
      size_t take = remaining_ < len ? static_cast<size_t>(remaining_) : len;
      if (take > 0) callbacks_.onResponseBody(std::string_view(data, take));
      remaining_ -= take;
      if (remaining_ == 0) phase_ = Phase::kDone;
      return take;
    }
    case BodyFraming::kChunked:
      return feedChunked(data, len);
    case BodyFraming::kNone:
      phase_ = Phase::kDone;
      return 0;
  }
  return 0;
}

// RFC 9112 §7.1: chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF; last-chunk is a
// size of 0, then trailer fields and the final CRLF.
size_t ResponseParser::feedChunked(const char* data, size_t len) {
  size_t i = 0;
  while (i < len && phase_ == Phase::kBody) {
    char c = data[i];
    switch (chunk_) {
      case Chunk::kSize: {
        int v = hexValue(c);
        if (v >= 0) {
          if (++size_digits_ > kMaxSizeDigits) {
            fail("chunk size too large", 0);
            return i;
          }
          remaining_ = remaining_ * 16 + static_cast<uint64_t>(v);
          ++i;
          ++chunk_line_;
          break;
        }
        if (size_digits_ == 0) {
          fail("malformed chunk size", 0);
          return i;
        }
        chunk_ = Chunk::kSizeSpace;
        break;  // c is looked at again in the next state
      }
      case Chunk::kSizeSpace:
        // chunk-ext = *( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )
        if (c == ' ' || c == '\t') {
          ++i;
        } else if (c == ';') {
          chunk_ = Chunk::kExtension;
          ++i;
        } else if (c == '\r') {
          chunk_ = Chunk::kSizeLf;
          ++i;
        } else {
          fail("malformed chunk size", 0);
          return i;
        }
        if (++chunk_line_ > limits_.max_chunk_line) {
          fail("chunk extensions too long", 0);
          return i;
        }
        break;
      case Chunk::kExtension:
        if (c == '\r') {
          chunk_ = Chunk::kSizeLf;
        } else if (!isFieldByte(static_cast<unsigned char>(c))) {
          fail("control character in a chunk extension", 0);
          return i;
        }
        ++i;
        if (++chunk_line_ > limits_.max_chunk_line) {
          fail("chunk extensions too long", 0);
          return i;
        }
        break;
      case Chunk::kSizeLf:
        if (c != '\n') {
          fail("chunk size line not ended by CRLF", 0);
          return i;
        }
        ++i;
        size_digits_ = 0;
        chunk_line_ = 0;
        chunk_ = remaining_ == 0 ? Chunk::kTrailerStart : Chunk::kData;
        break;
      case Chunk::kData: {
        size_t avail = len - i;
        size_t take = remaining_ < avail ? static_cast<size_t>(remaining_) : avail;
        callbacks_.onResponseBody(std::string_view(data + i, take));
        i += take;
        remaining_ -= take;
        if (remaining_ == 0) chunk_ = Chunk::kDataCr;
        break;
      }
      case Chunk::kDataCr:
        if (c != '\r') {
          fail("chunk data not followed by CRLF", 0);
          return i;
        }
        ++i;
        chunk_ = Chunk::kDataLf;
        break;
      case Chunk::kDataLf:
        if (c != '\n') {
          fail("chunk data not followed by CRLF", 0);
          return i;
        }
        ++i;
        chunk_ = Chunk::kSize;
        break;
      case Chunk::kTrailerStart:
        if (c == '\r') {
          chunk_ = Chunk::kFinalLf;
          ++i;
          break;
        }
        chunk_ = Chunk::kTrailerName;
        break;
      case Chunk::kTrailerName:
        // Trailer fields are checked like header fields and dropped: nothing after the
        // body may change how the client reads it (RFC 9110 §6.5.1).
        if (c == ':' && trailer_line_ > 0) {
          chunk_ = Chunk::kTrailerValue;
        } else if (!isTokenChar(static_cast<unsigned char>(c))) {
          fail("malformed trailer field", 0);
          return i;
        }
        ++i;
        ++trailer_line_;
        if (++trailer_bytes_ > limits_.max_trailers) {
          fail("trailer section too large", 0);
          return i;
        }
        break;
      case Chunk::kTrailerValue:
        if (c == '\r') {
          chunk_ = Chunk::kTrailerLf;
        } else if (!isFieldByte(static_cast<unsigned char>(c))) {
          fail("control character in a trailer field", 0);
          return i;
        }
        ++i;
        if (++trailer_bytes_ > limits_.max_trailers) {
          fail("trailer section too large", 0);
          return i;
        }
        break;
      case Chunk::kTrailerLf:
        if (c != '\n') {
          fail("bare CR in a trailer field", 0);
          return i;
        }
        ++i;
        trailer_line_ = 0;
        chunk_ = Chunk::kTrailerStart;
        break;
      case Chunk::kFinalLf:
        if (c != '\n') {
          fail("last chunk not ended by CRLF", 0);
          return i;
        }
        ++i;
        phase_ = Phase::kDone;
        break;
    }
  }
  return i;
}

}  // namespace scalws::worker::proxy
