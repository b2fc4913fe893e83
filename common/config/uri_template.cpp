#include "common/config/uri_template.h"

#include <cstring>

namespace scalws::common::config {
namespace {

constexpr char kHex[] = "0123456789ABCDEF";

bool isAlnum(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// RFC 3986: pchar = unreserved / pct-encoded / sub-delims / ":" / "@"; plus "/".
bool keptInPath(unsigned char c) {
  return isAlnum(c) || (c != 0 && std::strchr("-._~!$&'()*+,;=:@/", c) != nullptr);
}

// A query component: what survives a form decoder unchanged ("+" would read as a space,
// "&" and "=" would split the value).
bool keptInQuery(unsigned char c) {
  return isAlnum(c) || (c != 0 && std::strchr("-._~!$'()*,;:@/", c) != nullptr);
}

template <typename Keep>
void appendEncoded(std::string& out, std::string_view text, Keep keep) {
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if (keep(c)) {
      out.push_back(ch);
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
}

// Visible ASCII that may stand in a URI reference as written (RFC 3986 §2: no space,
// no '"', '<', '>', '\', '^', '`', '|'; braces are the template's own).
bool literalByte(unsigned char c) {
  return c > 0x20 && c < 0x7f && std::strchr("\"<>\\^`|{}", c) == nullptr;
}

bool isScheme(std::string_view text) {
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  if (!((text[0] >= 'a' && text[0] <= 'z') || (text[0] >= 'A' && text[0] <= 'Z'))) return false;
  for (size_t i = 1; i < colon; ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (!isAlnum(c) && c != '+' && c != '-' && c != '.') return false;
  }
  return true;
}

Status refuse(const std::string& what, size_t offset) {
  return invalidArgument(what + " (at offset " + std::to_string(offset) + ")");
}

}  // namespace

void appendPathEncoded(std::string& out, std::string_view text) {
  appendEncoded(out, text, keptInPath);
}

void appendQueryEncoded(std::string& out, std::string_view text) {
  appendEncoded(out, text, keptInQuery);
}

Result<UriTemplate> UriTemplate::parse(std::string_view text, Kind kind) {
  UriTemplate t;
  t.text_ = std::string(text);
  if (text.empty()) return invalidArgument("must not be empty");
  auto literal = [&t]() -> std::string& {
    if (t.pieces_.empty() || t.pieces_.back().part != Part::kLiteral) t.pieces_.push_back(Piece{});
    return t.pieces_.back().literal;
  };
  for (size_t i = 0; i < text.size();) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '{') {
      size_t close = text.find('}', i);
      std::string_view name =
          close == std::string_view::npos ? text.substr(i) : text.substr(i, close - i + 1);
      Part part;
      if (name == "{host}") {
        part = Part::kHost;
      } else if (name == "{uri}") {
        part = Part::kUri;
      } else if (name == "{path}") {
        part = Part::kPath;
      } else if (name == "{query}") {
        part = Part::kQuery;
      } else {
        return refuse("unknown placeholder \"" + std::string(name.substr(0, 24)) +
                          "\" (expected {host}, {uri}, {path}, {query} or $0..$9; a literal "
                          "brace is written %7B or %7D)",
                      i);
      }
      if (part == Part::kQuery || part == Part::kUri) t.places_query_ = true;
      t.pieces_.push_back(Piece{part, 0, {}});
      i += name.size();
      continue;
    }
    if (c == '$') {
      if (i + 1 < text.size() && text[i + 1] == '$') {
        literal().push_back('$');
        i += 2;
        continue;
      }
      if (i + 1 < text.size() && text[i + 1] >= '0' && text[i + 1] <= '9') {
        auto group = static_cast<uint8_t>(text[i + 1] - '0');
        t.pieces_.push_back(Piece{Part::kCapture, group, {}});
        if (group > t.highest_capture_) t.highest_capture_ = group;
        t.uses_captures_ = true;
        i += 2;
        continue;
      }
      return refuse("\"$\" must be followed by a digit ($1) or another \"$\" (\"$$\" is a dollar)",
                    i);
    }
    if (c == '}') return refuse("\"}\" outside a placeholder (write %7D)", i);
    if (!literalByte(c)) {
      return refuse(c == ' ' ? std::string("a space must be written %20")
                             : std::string("only visible ASCII may be written (percent-encode "
                                           "the rest)"),
                    i);
    }
    if (c == '#' && kind == Kind::kRewrite) {
      return refuse("a rewrite has no fragment (\"#\"); it is the client's alone", i);
    }
    if (c == '?') t.has_query_ = true;
    literal().push_back(static_cast<char>(c));
    ++i;
  }
  const Piece& first = t.pieces_.front();
  bool starts_as_path = first.part == Part::kPath || first.part == Part::kUri ||
                        (first.part == Part::kLiteral && first.literal.front() == '/');
  if (kind == Kind::kRewrite && !starts_as_path) {
    return invalidArgument("a rewrite must start with \"/\" (or {path}, {uri})");
  }
  if (kind == Kind::kRedirect && !starts_as_path &&
      !(first.part == Part::kLiteral && isScheme(first.literal))) {
    return invalidArgument(
        "must start with \"/\", \"//\", a scheme (\"https://...\"), {path} or {uri}");
  }
  t.ends_with_question_mark_ = text.back() == '?';
  return t;
}

bool UriTemplate::expand(const Values& v, std::string& out, size_t max) const {
  bool in_query = false;
  for (const Piece& p : pieces_) {
    switch (p.part) {
      case Part::kLiteral:
        out.append(p.literal);
        in_query = in_query || p.literal.find('?') != std::string::npos;
        break;
      case Part::kHost:
        out.append(v.host);
        break;
      case Part::kUri:
        out.append(v.uri);
        in_query = in_query || v.uri.find('?') != std::string_view::npos;
        break;
      case Part::kPath:
        appendPathEncoded(out, v.path);
        break;
      case Part::kQuery:
        out.append(v.query);
        break;
      case Part::kCapture: {
        std::string_view text = v.captures != nullptr ? v.captures->groups[p.group] : "";
        if (in_query) {
          appendQueryEncoded(out, text);
        } else {
          appendPathEncoded(out, text);
        }
        break;
      }
    }
    if (out.size() > max) return false;
  }
  return true;
}

}  // namespace scalws::common::config
