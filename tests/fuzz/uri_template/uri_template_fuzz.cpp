// Fuzz target: a redirect or rewrite template and the request it is expanded for. The first
// byte picks the kind; the input is then "template NUL path NUL query NUL host". The path
// is matched by a regex with groups, as a route's would be. Whatever the input: no crash;
// a refused template says why; an expansion respects its bound, and when the request's own
// values are visible ASCII (as the request parsers guarantee for {uri}, {query} and
// {host}), the result is visible ASCII too, whatever the captured path held; a rewrite's
// result starts with "/".
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/config/uri_template.h"
#include "common/regex/regex.h"

using scalws::common::Regex;
using scalws::common::RegexCaptures;
using scalws::common::config::UriTemplate;

namespace {

std::string_view nextPart(std::string_view& rest) {
  size_t nul = rest.find('\0');
  std::string_view part = rest.substr(0, nul);
  rest = nul == std::string_view::npos ? std::string_view() : rest.substr(nul + 1);
  return part;
}

bool visible(std::string_view s) {
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u >= 0x7f) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto kind = (data[0] & 1) != 0 ? UriTemplate::Kind::kRewrite : UriTemplate::Kind::kRedirect;
  std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  std::string_view text = nextPart(rest);
  std::string_view path = nextPart(rest);
  std::string_view query = nextPart(rest);
  std::string_view host = nextPart(rest);

  auto parsed = UriTemplate::parse(text, kind);
  if (!parsed.ok()) {
    if (parsed.status().message().empty()) std::abort();
    return 0;
  }
  static const auto regex = Regex::compile("^(/[^/]*)?(.*?)([^/]*)$");
  RegexCaptures captures;
  bool matched = regex.ok() && (*regex)->match(path, captures);
  UriTemplate::Values values{host, path, path, query, matched ? &captures : nullptr};
  constexpr size_t kMax = 4096;
  std::string out;
  if (!parsed->expand(values, out, kMax)) {
    if (out.size() <= kMax) std::abort();  // refused only past the bound
    return 0;
  }
  if (out.size() > kMax) std::abort();
  if (visible(path) && visible(query) && visible(host) && !visible(out)) std::abort();
  if (kind == UriTemplate::Kind::kRewrite && (out.empty() || out.front() != '/')) {
    // {uri} and {path} stand for what starts with "/" in a request; here the fuzzer's path
    // may not, so only a literal start is checked.
    if (text.front() == '/') std::abort();
  }
  return 0;
}
