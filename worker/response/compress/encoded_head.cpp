#include "worker/response/compress/encoded_head.h"

#include <algorithm>
#include <cstring>

namespace scalws::worker::compress {

void addVaryAcceptEncoding(std::vector<HeaderField>& fields) {
  for (const HeaderField& h : fields) {
    if (!equalsIgnoreCase(h.name, "vary")) continue;
    if (headerListContains(h.value, "accept-encoding") || headerListContains(h.value, "*")) return;
  }
  // A second Vary field is the same as a longer list (RFC 9110 §5.3).
  fields.push_back(HeaderField{"Vary", "Accept-Encoding"});
}

void weakenEtag(std::vector<HeaderField>& fields, Arena& arena) {
  for (HeaderField& h : fields) {
    if (!equalsIgnoreCase(h.name, "etag") || h.value.starts_with("W/")) continue;
    char* p = arena.allocate(h.value.size() + 2);
    std::memcpy(p, "W/", 2);
    std::memcpy(p + 2, h.value.data(), h.value.size());
    h.value = std::string_view(p, h.value.size() + 2);
  }
}

void dropFields(std::vector<HeaderField>& fields, std::string_view name) {
  fields.erase(std::remove_if(fields.begin(), fields.end(),
                              [&](const HeaderField& h) { return equalsIgnoreCase(h.name, name); }),
               fields.end());
}

}  // namespace scalws::worker::compress
