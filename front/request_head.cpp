#include "front/request_head.h"

#include <cstring>

#include "common/net/host_name_table.h"

namespace scalws::front {
namespace {

using HeadOutcome = HostPeek::Outcome;

constexpr std::string_view kPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

HostPeek headResult(HeadOutcome outcome, std::string host = {}) {
  return HostPeek{outcome, std::move(host)};
}

bool isTchar(char c) {
  bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
  return alnum || (c != '\0' && std::strchr("!#$%&'*+-.^_`|~", c) != nullptr);
}

bool isDigit(char c) {
  return c >= '0' && c <= '9';
}

char lower(char c) {
  return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
}

bool startsWithIgnoreCase(std::string_view text, std::string_view prefix) {
  if (text.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (lower(text[i]) != prefix[i]) return false;
  }
  return true;
}

// RFC 9112 §3: METHOD SP request-target SP HTTP-version. With `partial`, whether `line` can
// still become one (it is all that arrived of it).
bool requestLineFits(std::string_view line, bool partial) {
  size_t i = 0;
  while (i < line.size() && isTchar(line[i])) ++i;
  if (i == line.size()) return partial;
  if (i == 0 || line[i] != ' ') return false;
  size_t target = ++i;
  while (i < line.size() && line[i] > 0x20 && line[i] < 0x7f) ++i;
  if (i == line.size()) return partial;
  if (i == target || line[i] != ' ') return false;
  std::string_view version = line.substr(i + 1);
  constexpr std::string_view kShape = "HTTP/D.D";
  if (version.size() > kShape.size()) return false;
  for (size_t k = 0; k < version.size(); ++k) {
    bool ok = kShape[k] == 'D' ? isDigit(version[k]) : version[k] == kShape[k];
    if (!ok) return false;
  }
  return partial || version.size() == kShape.size();
}

// A header field line (RFC 9112 §5): a token, a colon, then a value without controls other
// than HTAB. A line starting with whitespace (obs-fold) does not fit.
bool fieldLineFits(std::string_view line, bool partial) {
  size_t i = 0;
  while (i < line.size() && isTchar(line[i])) ++i;
  if (i == line.size()) return partial;
  if (i == 0 || line[i] != ':') return false;
  for (char c : line.substr(i + 1)) {
    auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return false;
  }
  return true;
}

// The host of an authority ("host", "host:port", "[v6]:port").
HostPeek fromAuthority(std::string_view authority) {
  if (authority.empty()) return headResult(HeadOutcome::kNoHost);
  if (authority.find('@') != std::string_view::npos) return headResult(HeadOutcome::kInvalid);
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    size_t close = authority.find(']');
    if (close == std::string_view::npos) return headResult(HeadOutcome::kInvalid);
    host = authority.substr(0, close + 1);
    port = authority.substr(close + 1);
  } else if (size_t colon = authority.find(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon);
  }
  if (!port.empty()) {
    if (port.front() != ':' || port.size() > 6) return headResult(HeadOutcome::kInvalid);
    for (char c : port.substr(1)) {
      if (!isDigit(c)) return headResult(HeadOutcome::kInvalid);
    }
  }
  if (host.front() == '[')
    return headResult(HeadOutcome::kNoHost);  // an IPv6 literal names no host
  std::string name;
  if (!common::net::normalizeHostName(host, name)) return headResult(HeadOutcome::kInvalid);
  return headResult(HeadOutcome::kHost, std::move(name));
}

// RFC 9112 §3.2.2: an absolute-form target's authority ("http://HOST:PORT/path").
bool absoluteAuthority(std::string_view line, std::string_view& authority) {
  size_t start = line.find(' ') + 1;
  size_t end = line.find(' ', start);
  std::string_view target = line.substr(start, end - start);
  size_t scheme = 0;
  if (startsWithIgnoreCase(target, "http://")) {
    scheme = 7;
  } else if (startsWithIgnoreCase(target, "https://")) {
    scheme = 8;
  } else {
    return false;
  }
  target.remove_prefix(scheme);
  authority = target.substr(0, target.find_first_of("/?#"));
  return true;
}

std::string_view trimOws(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

bool equalsIgnoreCase(std::string_view a, std::string_view lower_b) {
  return a.size() == lower_b.size() && startsWithIgnoreCase(a, lower_b);
}

}  // namespace

HostPeek peekRequestHost(std::string_view bytes, size_t max_head) {
  bool truncated = bytes.size() >= max_head;
  std::string_view in = bytes.substr(0, max_head);
  size_t preface = std::min(in.size(), kPreface.size());
  if (in.substr(0, preface) == kPreface.substr(0, preface)) {
    return headResult(preface == kPreface.size() ? HeadOutcome::kH2cPreface
                                                 : HeadOutcome::kNeedMore);
  }
  // §2.2: at least one empty line before the request line is to be ignored.
  size_t pos = 0;
  while (in.size() - pos >= 2 && in.substr(pos, 2) == "\r\n") pos += 2;
  bool first = true;
  while (true) {
    std::string_view rest = in.substr(pos);
    size_t crlf = rest.find("\r\n");
    std::string_view line = rest.substr(0, crlf);
    size_t lf = line.find('\n');
    if (lf != std::string_view::npos) return headResult(HeadOutcome::kInvalid);  // a bare LF
    if (crlf == std::string_view::npos) {
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);  // CR of the CRLF
      if (line.find('\r') != std::string_view::npos) return headResult(HeadOutcome::kInvalid);
      bool fits = first ? requestLineFits(line, true) : fieldLineFits(line, true);
      if (!fits) return headResult(HeadOutcome::kInvalid);
      return headResult(truncated ? HeadOutcome::kTooLarge : HeadOutcome::kNeedMore);
    }
    if (line.find('\r') != std::string_view::npos) return headResult(HeadOutcome::kInvalid);
    pos += crlf + 2;
    if (first) {
      if (!requestLineFits(line, false)) return headResult(HeadOutcome::kInvalid);
      std::string_view authority;
      if (absoluteAuthority(line, authority)) return fromAuthority(authority);
      first = false;
      continue;
    }
    if (line.empty()) return headResult(HeadOutcome::kNoHost);  // the head ended without Host
    if (!fieldLineFits(line, false)) return headResult(HeadOutcome::kInvalid);
    size_t colon = line.find(':');
    if (equalsIgnoreCase(line.substr(0, colon), "host")) {
      return fromAuthority(trimOws(line.substr(colon + 1)));
    }
  }
}

}  // namespace scalws::front
