// A TCP or UDP port written in decimal, as in "10.0.0.1:8080" or a PROXY protocol header.
#pragma once

#include <cstdint>
#include <string_view>

namespace scalws::common::net {

// 0..65535 in at most five decimal digits, nothing else; false (port untouched) otherwise.
bool parsePortNumber(std::string_view text, uint16_t& port);

}  // namespace scalws::common::net
