// Reading files back in tests.
#pragma once

#include <string>

namespace scalws::testing {

// The whole file, byte for byte ("" when it cannot be opened).
std::string readFile(const std::string& path);

}  // namespace scalws::testing
