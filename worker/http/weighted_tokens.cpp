#include "worker/http/weighted_tokens.h"

#include "worker/http/header_field.h"

namespace scalws::worker {
namespace {

// RFC 9110 §12.4.2: qvalue = ( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] ); -1 when
// malformed.
int parseQValue(std::string_view v) {
  if (v.empty() || (v[0] != '0' && v[0] != '1')) return -1;
  int whole = v[0] - '0';
  if (v.size() == 1) return whole * 1000;
  if (v[1] != '.' || v.size() > 5) return -1;
  int frac = 0;
  int digits = 0;
  for (char c : v.substr(2)) {
    if (c < '0' || c > '9') return -1;
    frac = frac * 10 + (c - '0');
    ++digits;
  }
  for (; digits < 3; ++digits) frac *= 10;
  if (whole == 1 && frac != 0) return -1;
  return whole * 1000 + frac;
}

// The part of `list` before `separator`, which `list` then drops (with the separator).
std::string_view cut(std::string_view& list, char separator) {
  size_t at = list.find(separator);
  std::string_view head = list.substr(0, at);
  list = at == std::string_view::npos ? std::string_view() : list.substr(at + 1);
  return head;
}

}  // namespace

bool WeightedTokens::next(std::string_view& token, int& q) {
  while (!rest_.empty()) {
    std::string_view params = cut(rest_, ',');
    token = trimOws(cut(params, ';'));
    if (token.empty()) continue;
    q = 1000;
    while (!params.empty()) {
      std::string_view param = trimOws(cut(params, ';'));
      if (param.size() >= 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
        q = parseQValue(trimOws(param.substr(2)));
      }
    }
    if (q < 0) q = 0;
    return true;
  }
  return false;
}

}  // namespace scalws::worker
