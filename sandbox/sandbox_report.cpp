#include "sandbox/sandbox_report.h"

#include <array>
#include <nlohmann/json.hpp>
#include <string_view>
#include <utility>

#include "sandbox/landlock_abi.h"

namespace scalws::sandbox {
namespace {

namespace abi = landlock_abi;

using BitName = std::pair<uint64_t, std::string_view>;

constexpr std::array kFsRightNames = {
    BitName{abi::kFsExecute, "execute"},      BitName{abi::kFsWriteFile, "write_file"},
    BitName{abi::kFsReadFile, "read_file"},   BitName{abi::kFsReadDir, "read_dir"},
    BitName{abi::kFsRemoveDir, "remove_dir"}, BitName{abi::kFsRemoveFile, "remove_file"},
    BitName{abi::kFsMakeChar, "make_char"},   BitName{abi::kFsMakeDir, "make_dir"},
    BitName{abi::kFsMakeReg, "make_reg"},     BitName{abi::kFsMakeSock, "make_sock"},
    BitName{abi::kFsMakeFifo, "make_fifo"},   BitName{abi::kFsMakeBlock, "make_block"},
    BitName{abi::kFsMakeSym, "make_sym"},     BitName{abi::kFsRefer, "refer"},
    BitName{abi::kFsTruncate, "truncate"},    BitName{abi::kFsIoctlDev, "ioctl_dev"},
};
constexpr std::array kNetRightNames = {
    BitName{abi::kNetBindTcp, "bind_tcp"},
    BitName{abi::kNetConnectTcp, "connect_tcp"},
};
constexpr std::array kScopeNames = {
    BitName{abi::kScopeAbstractUnixSocket, "abstract_unix_socket"},
    BitName{abi::kScopeSignal, "signal"},
};

template <size_t N>
std::vector<std::string> namesOf(uint64_t bits, const std::array<BitName, N>& table) {
  std::vector<std::string> out;
  for (const auto& [bit, name] : table) {
    if (bits & bit) out.emplace_back(name);
  }
  uint64_t known = 0;
  for (const auto& entry : table) known |= entry.first;
  // A bit we have no name for is still shown, so a report never hides a right.
  for (int i = 0; i < 64; ++i) {
    uint64_t bit = 1ULL << i;
    if ((bits & bit) && !(known & bit)) out.push_back("bit" + std::to_string(i));
  }
  return out;
}

std::string joined(const std::vector<std::string>& words, std::string_view none = "none") {
  if (words.empty()) return std::string(none);
  std::string out;
  for (const std::string& w : words) {
    if (!out.empty()) out += ' ';
    out += w;
  }
  return out;
}

template <typename T>
std::string joinedNumbers(const std::vector<T>& values, std::string_view none = "none") {
  std::vector<std::string> words;
  for (T v : values) words.push_back(std::to_string(v));
  return joined(words, none);
}

}  // namespace

std::vector<std::string> landlockFsRightNames(uint64_t rights) {
  return namesOf(rights, kFsRightNames);
}
std::vector<std::string> landlockNetRightNames(uint64_t rights) {
  return namesOf(rights, kNetRightNames);
}
std::vector<std::string> landlockScopeNames(uint64_t scopes) {
  return namesOf(scopes, kScopeNames);
}

std::vector<std::string> SandboxReport::toLines() const {
  std::vector<std::string> lines;
  lines.push_back("sandbox mode: " + std::string(sandboxModeName(mode)));
  std::string who = identity.changed ? "dropped to user " + identity.user : "kept";
  lines.push_back("identity: " + who + ", uid " + std::to_string(identity.uid) + ", gid " +
                  std::to_string(identity.gid) + ", groups " + joinedNumbers(identity.groups));
  lines.push_back(std::string("no_new_privs: ") + (noNewPrivs ? "yes" : "no"));

  if (landlock.abi == 0) {
    lines.push_back("landlock: not available in this kernel");
  } else {
    lines.push_back("landlock: ABI " + std::to_string(landlock.abi) +
                    (landlock.enforced ? ", enforced" : ", not enforced"));
  }
  if (landlock.enforced) {
    lines.push_back("landlock handled fs rights: " +
                    joined(landlockFsRightNames(landlock.handledFs)));
    for (const LandlockPathReport& p : landlock.paths) {
      lines.push_back("landlock path " + p.path + " (" + (p.directory ? "directory" : "file") +
                      ", " + std::string(pathAccessName(p.access)) +
                      "): " + joined(landlockFsRightNames(p.rights)));
    }
    if (landlock.handledNet != 0) {
      lines.push_back("landlock tcp: bind denied, connect allowed to ports " +
                      joinedNumbers(landlock.tcpConnectPorts));
    }
    if (landlock.scoped != 0) {
      lines.push_back("landlock scopes: " + joined(landlockScopeNames(landlock.scoped)));
    }
  }

  if (seccomp.enforced && seccomp.denyList) {
    lines.push_back("seccomp: enforced, deny-list: " + std::to_string(seccomp.deniedSyscalls) +
                    " syscalls refused (" + std::to_string(seccomp.rules) +
                    " rules), everything else allowed");
  } else if (seccomp.enforced) {
    lines.push_back(
        "seccomp: enforced, action " +
        std::string(seccomp.action == SeccompAction::kKill ? "kill process" : "EPERM, logged") +
        ", " + std::string(seccompProfileName(seccomp.profile)) + " allow-list, " +
        std::to_string(seccomp.allowedSyscalls) + " syscalls allowed (" +
        std::to_string(seccomp.rules) + " rules)");
    if (seccomp.udpDatagrams) {
      lines.push_back(
          "seccomp udp: HTTP/3 datagrams on the inherited sockets (recvmmsg, sendmmsg); "
          "no UDP socket can be created");
    }
  } else {
    lines.push_back("seccomp: not enforced");
  }
  for (const std::string& d : degraded) lines.push_back("degraded: " + d);
  lines.push_back(std::string("verified in /proc/self/status: ") + (verified ? "yes" : "no"));
  return lines;
}

nlohmann::json SandboxReport::toJson() const {
  nlohmann::json paths = nlohmann::json::array();
  for (const LandlockPathReport& p : landlock.paths) {
    paths.push_back({{"path", p.path},
                     {"kind", p.directory ? "directory" : "file"},
                     {"access", pathAccessName(p.access)},
                     {"rights", landlockFsRightNames(p.rights)}});
  }
  return {
      {"mode", sandboxModeName(mode)},
      {"identity",
       {{"changed", identity.changed},
        {"user", identity.user},
        {"uid", identity.uid},
        {"gid", identity.gid},
        {"groups", identity.groups}}},
      {"no_new_privs", noNewPrivs},
      {"landlock",
       {{"abi", landlock.abi},
        {"enforced", landlock.enforced},
        {"handled_fs", landlockFsRightNames(landlock.handledFs)},
        {"handled_net", landlockNetRightNames(landlock.handledNet)},
        {"scoped", landlockScopeNames(landlock.scoped)},
        {"paths", paths},
        {"tcp_connect_ports", landlock.tcpConnectPorts}}},
      {"seccomp",
       {{"enforced", seccomp.enforced},
        {"action", seccompActionName(seccomp.action)},
        {"list", seccomp.denyList ? "deny" : "allow"},
        {"profile", seccompProfileName(seccomp.profile)},
        {"allowed_syscalls", seccomp.allowedSyscalls},
        {"denied_syscalls", seccomp.deniedSyscalls},
        {"rules", seccomp.rules},
        {"not_on_this_arch", seccomp.notOnThisArch},
        {"udp_datagrams", seccomp.udpDatagrams}}},
      {"degraded", degraded},
      {"verified", verified},
  };
}

}  // namespace scalws::sandbox
