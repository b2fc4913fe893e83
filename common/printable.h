// printable(): text from an untrusted source (a worker's report, its stderr, a peer's error
// message) made safe to put on a terminal or in one log line: control characters cannot
// move the cursor, recolour the screen or start a forged line.
#pragma once

#include <string>
#include <string_view>

namespace scalws::common {

// C0 and C1 control characters and DEL as \xNN (tab, newline and backslash as \t, \n and
// \\), bytes that are not UTF-8 as \xNN; everything else (UTF-8 included) as it is.
std::string printable(std::string_view text);

}  // namespace scalws::common
