#include "tests/support/cache_keys.h"

namespace scalws::testing {

std::string keyOf(std::string_view path) {
  return "http\nshop\n" + std::string(path) + "\n\n";
}

}  // namespace scalws::testing
