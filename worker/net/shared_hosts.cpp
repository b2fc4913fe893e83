#include "worker/net/shared_hosts.h"

namespace scalws::worker {

std::shared_ptr<const SharedHosts> SharedHosts::build(const ipc::SharedAddressNames& names) {
  auto hosts = std::make_shared<SharedHosts>();
  for (const std::string& name : names.mine) hosts->table_.add(name, kMine);
  for (const std::string& name : names.others) hosts->table_.add(name, kOther);
  switch (names.fallback) {
    case ipc::SharedAddressNames::Fallback::kMine:
      hosts->table_.setDefault(kMine);
      break;
    case ipc::SharedAddressNames::Fallback::kOther:
      hosts->table_.setDefault(kOther);
      break;
    case ipc::SharedAddressNames::Fallback::kNone:
      break;
  }
  return hosts;
}

}  // namespace scalws::worker
