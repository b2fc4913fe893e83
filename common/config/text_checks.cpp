#include "common/config/text_checks.h"

#include <cstring>

namespace scalws::common::config {

bool isHttpToken(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    bool alnum = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (!alnum && (c == '\0' || std::strchr("!#$%&'*+-.^_`|~", c) == nullptr)) return false;
  }
  return true;
}

bool isValidFieldValue(std::string_view text) {
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u == 0x7f) return false;
  }
  return true;
}

std::string toLowerAscii(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

namespace {

bool isNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

}  // namespace

std::string checkServerName(const std::string& name) {
  std::string_view rest = name;
  if (rest.size() > 2 && rest.substr(0, 2) == "*.") rest.remove_prefix(2);
  if (rest.empty() || rest.front() == '.' || rest.back() == '.' ||
      rest.find("..") != std::string_view::npos || rest.size() > 253) {
    return "\"" + name + "\" is not a valid server name";
  }
  for (char c : rest) {
    if (c == '*') {
      return "\"" + name + "\": a wildcard is only allowed as a leading \"*.\"";
    }
    if (!isNameChar(c)) return "\"" + name + "\" is not a valid server name";
  }
  return {};
}

}  // namespace scalws::common::config
