// quoted("x") is "\"x\"": a name or value as error messages show it.
//
// Built by appending on purpose: GCC 12 at -O3 reports a false -Wrestrict inside
// `"\"" + std::string(text)` (GCC bug 105329, operator+ of a literal and a temporary
// string), which broke Release builds under -Werror.
#pragma once

#include <string>
#include <string_view>

namespace scalws::common {

inline std::string quoted(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  out.append(text);
  out.push_back('"');
  return out;
}

}  // namespace scalws::common
