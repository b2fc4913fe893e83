#include "worker/handlers/fastcgi/cgi_head_parser.h"

namespace scalws::worker::fastcgi {
namespace {

// Headers the HTTP writer produces itself or that describe the hop to PHP, not the response.
constexpr std::string_view kDropped[] = {
    "content-length", "transfer-encoding", "connection", "keep-alive", "date", "server"};

bool validValue(std::string_view v) {
  for (unsigned char c : v) {
    if ((c < 0x20 && c != '\t') || c == 0x7f) return false;
  }
  return true;
}

// The end of the header block in `s` searching from `from`: the index just past the empty
// line, or npos.
size_t findBlockEnd(std::string_view s, size_t from) {
  for (size_t i = s.find('\n', from); i != std::string_view::npos; i = s.find('\n', i + 1)) {
    if (i == 0) return 1;  // an empty first line: no headers at all
    if (i == 1 && s[0] == '\r') return 2;
    if (s[i - 1] == '\n') return i + 1;
    if (s[i - 1] == '\r' && i >= 2 && s[i - 2] == '\n') return i + 1;
  }
  return std::string_view::npos;
}

}  // namespace

void CgiHeadParser::reset() {
  block_.clear();
  headers_.clear();
  status_ = 200;
}

CgiHeadParser::Result CgiHeadParser::feed(std::string_view data) {
  size_t old = block_.size();
  // Search from a little before the new bytes: the empty line may straddle two pieces.
  size_t from = old >= 2 ? old - 2 : 0;
  block_.append(data);
  size_t end = findBlockEnd(block_, from);
  if (end == std::string_view::npos) {
    if (block_.size() > max_head_)
      return Result{Outcome::kError, data.size(), "CGI head too large"};
    return Result{Outcome::kNeedMore, data.size(), ""};
  }
  if (end > max_head_) return Result{Outcome::kError, data.size(), "CGI head too large"};
  block_.resize(end);
  Result r = parseBlock(end);
  r.consumed = end - old;
  return r;
}

CgiHeadParser::Result CgiHeadParser::parseBlock(size_t block_end) {
  std::string_view block(block_.data(), block_end);
  bool has_status = false;
  bool has_location = false;
  size_t pos = 0;
  while (pos < block.size()) {
    size_t nl = block.find('\n', pos);
    std::string_view line = block.substr(pos, nl - pos);
    pos = nl + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) break;
    size_t colon = line.find(':');
    if (colon == std::string_view::npos)
      return Result{Outcome::kError, 0, "CGI header without ':'"};
    std::string_view name = line.substr(0, colon);
    std::string_view value = trimOws(line.substr(colon + 1));
    if (!isToken(name)) return Result{Outcome::kError, 0, "CGI header name is not a token"};
    if (!validValue(value)) return Result{Outcome::kError, 0, "CGI header value has controls"};
    if (equalsIgnoreCase(name, "status")) {
      // "404" or "404 Not Found": three digits; 1xx cannot be relayed as a final answer.
      if (value.size() < 3 || (value.size() > 3 && value[3] != ' ')) {
        return Result{Outcome::kError, 0, "bad CGI Status"};
      }
      uint16_t code = 0;
      for (size_t i = 0; i < 3; ++i) {
        if (value[i] < '0' || value[i] > '9') return Result{Outcome::kError, 0, "bad CGI Status"};
        code = static_cast<uint16_t>(code * 10 + (value[i] - '0'));
      }
      if (code < 200 || code > 599) return Result{Outcome::kError, 0, "bad CGI Status"};
      status_ = code;
      has_status = true;
      continue;
    }
    bool dropped = false;
    for (std::string_view d : kDropped) dropped = dropped || equalsIgnoreCase(name, d);
    if (dropped) continue;
    if (equalsIgnoreCase(name, "location")) has_location = true;
    headers_.push_back(HeaderField{name, value});
  }
  // RFC 3875 §6.2.3: a client redirect without Status is a 302.
  if (has_location && !has_status) status_ = 302;
  return Result{Outcome::kDone, 0, ""};
}

}  // namespace scalws::worker::fastcgi
