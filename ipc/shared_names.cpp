#include "ipc/shared_names.h"

namespace scalws::ipc {

using common::Result;

namespace {

constexpr size_t kMaxSharedAddresses = 1024;
constexpr size_t kMaxSharedNames = 100'000;  // all instances of one address together
constexpr size_t kMaxSharedName = 253;
constexpr std::string_view kSharedFallbacks[] = {"none", "mine", "other"};

Result<std::vector<std::string>> sharedNameList(const Json& entry, std::string_view key) {
  auto it = entry.find(key);
  if (it == entry.end() || !it->is_array() || it->size() > kMaxSharedNames) {
    return common::invalidArgument("shared: \"" + std::string(key) + "\" must be a list of names");
  }
  std::vector<std::string> out;
  for (const Json& n : *it) {
    if (!n.is_string() || n.get<std::string>().empty() ||
        n.get<std::string>().size() > kMaxSharedName) {
      return common::invalidArgument("shared: \"" + std::string(key) +
                                     "\" must be a list of names");
    }
    out.push_back(n.get<std::string>());
  }
  return out;
}

}  // namespace

void sharedNamesInto(const std::vector<SharedAddressNames>& shared, Json& out) {
  Json list = Json::array();
  for (const SharedAddressNames& s : shared) {
    list.push_back({{"address", s.address},
                    {"port", s.port},
                    {"mine", s.mine},
                    {"others", s.others},
                    {"fallback", kSharedFallbacks[static_cast<size_t>(s.fallback)]}});
  }
  out["shared"] = std::move(list);
}

Result<std::vector<SharedAddressNames>> sharedNamesFrom(const Json& args) {
  std::vector<SharedAddressNames> out;
  auto it = args.find("shared");
  if (it == args.end()) return out;
  if (!it->is_array() || it->size() > kMaxSharedAddresses) {
    return common::invalidArgument("\"shared\" must be a list");
  }
  for (const Json& entry : *it) {
    if (!entry.is_object()) return common::invalidArgument("shared: an entry is an object");
    SharedAddressNames s;
    SCALWS_ASSIGN_OR_RETURN(s.address, stringField(entry, "address"));
    SCALWS_ASSIGN_OR_RETURN(uint64_t port, uintField(entry, "port"));
    if (port == 0 || port > 65535) return common::invalidArgument("shared: bad \"port\"");
    s.port = static_cast<uint16_t>(port);
    SCALWS_ASSIGN_OR_RETURN(s.mine, sharedNameList(entry, "mine"));
    SCALWS_ASSIGN_OR_RETURN(s.others, sharedNameList(entry, "others"));
    SCALWS_ASSIGN_OR_RETURN(std::string fallback, stringField(entry, "fallback"));
    bool known = false;
    for (size_t i = 0; i < std::size(kSharedFallbacks); ++i) {
      if (fallback == kSharedFallbacks[i]) {
        s.fallback = static_cast<SharedAddressNames::Fallback>(i);
        known = true;
      }
    }
    if (!known) return common::invalidArgument("shared: \"fallback\" must be none, mine or other");
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace scalws::ipc
