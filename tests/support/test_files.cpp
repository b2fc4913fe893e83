#include "tests/support/test_files.h"

#include <fstream>
#include <sstream>

namespace scalws::testing {

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace scalws::testing
