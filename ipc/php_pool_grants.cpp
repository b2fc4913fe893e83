#include "ipc/php_pool_grants.h"

#include <set>

namespace scalws::ipc {

using common::Result;

namespace {

constexpr uint64_t kMaxConns = 65535;
constexpr size_t kMaxPools = 256;

}  // namespace

Json phpPoolGrantsJson(const std::vector<PhpPoolGrant>& grants) {
  Json list = Json::array();
  for (const PhpPoolGrant& g : grants) {
    list.push_back(
        {{"name", g.name}, {"address", g.address}, {"max_conns", g.max_conns}, {"share", g.share}});
  }
  return list;
}

common::Result<std::vector<PhpPoolGrant>> parsePhpPoolGrants(const Json& args) {
  std::vector<PhpPoolGrant> out;
  auto it = args.find("php_pools");
  if (it == args.end()) return out;
  if (!it->is_array() || it->size() > kMaxPools) {
    return common::invalidArgument("\"php_pools\" must be an array of at most " +
                                   std::to_string(kMaxPools) + " pools");
  }
  std::set<std::string> names;
  for (const Json& entry : *it) {
    Result<std::string> name = stringField(entry, "name");
    Result<std::string> address = stringField(entry, "address");
    Result<uint64_t> max_conns = uintField(entry, "max_conns");
    Result<uint64_t> share = uintField(entry, "share");
    for (const common::Status* s :
         {&name.status(), &address.status(), &max_conns.status(), &share.status()}) {
      if (!s->ok()) return common::invalidArgument("php_pools: " + s->message());
    }
    if (name->empty() || address->empty()) {
      return common::invalidArgument("php_pools: name and address must not be empty");
    }
    if (*max_conns > kMaxConns || *share > *max_conns || (*share == 0) != (*max_conns == 0)) {
      return common::invalidArgument("php_pools: pool " + *name +
                                     ": max_conns and share out of range");
    }
    if (!names.insert(*name).second) {
      return common::invalidArgument("php_pools: pool " + *name + " given twice");
    }
    out.push_back(PhpPoolGrant{*name, *address, static_cast<uint32_t>(*max_conns),
                               static_cast<uint32_t>(*share)});
  }
  return out;
}

}  // namespace scalws::ipc
