// Lowercase hexadecimal for binary values carried in JSON (IPC) and shown to people.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace scalws::common {

std::string toHex(std::string_view bytes);
// Upper or lower case; nullopt for an odd length or a character that is not a hex digit.
std::optional<std::string> fromHex(std::string_view hex);

}  // namespace scalws::common
