// Request methods the server treats specially; everything else is kOther with its name.
#pragma once

#include <cstdint>
#include <string_view>

namespace scalws::worker {

enum class Method : uint8_t {
  kGet,
  kHead,
  kPost,
  kPut,
  kDelete,
  kOptions,
  kPatch,
  kTrace,
  kConnect,
  kOther,
};

Method methodFromName(std::string_view name);

}  // namespace scalws::worker
