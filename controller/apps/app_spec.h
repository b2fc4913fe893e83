// AppSpec: one application the controller runs — what `scalwsctl app add` stores (as one
// JSON column of the apps table) and everything an AppProcess needs to start it.
//
//   runtime node:   node ENTRY, PORT=<socket path>; --processes N gives N node processes,
//                   each on a socket of its own (<app dir>/NAME/0.sock ... N-1.sock): a
//                   unix socket has no SO_REUSEPORT, and Node's cluster mode would put a
//                   primary of ours inside the app. The route balances over the N sockets
//                   as an upstream with N servers.
//   runtime python: gunicorn (--wsgi module:callable, N sync workers) or uvicorn (--asgi
//                   module:app, --workers N), one master on <app dir>/NAME/0.sock.
//
// The program runs in --dir (default: the entry's directory) as --user (never root), with
// only --env, PATH, HOME=--dir, TMPDIR (a private directory) and PORT in its environment.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::controller {

inline constexpr const char* kNodeBinary = "/usr/bin/node";
inline constexpr const char* kPython = "/usr/bin/python3";
inline constexpr uint64_t kMinAppMemory = 4ULL << 20;

struct AppSpec {
  enum class Runtime { kNode, kWsgi, kAsgi };

  std::string name;
  Runtime runtime = Runtime::kNode;
  std::string entry;   // node: the script, absolute
  std::string target;  // python: module:callable
  uint32_t processes = 1;
  std::string user;
  std::string dir;                    // absolute; read-only to the app
  std::vector<std::string> env;       // K=V
  std::vector<std::string> writable;  // absolute directories
  std::vector<std::string> connect;   // host:port, TCP
  uint64_t memory_bytes = 0;          // 0: no limit; else of each process (and its children)

  bool operator==(const AppSpec&) const = default;
};

std::string_view runtimeName(AppSpec::Runtime runtime);

// Every field checked (names, absolute paths, K=V, ports, counts); --dir defaults to the
// entry's directory. The user's existence is checked by the caller.
common::Status validateAppSpec(AppSpec& spec);

ipc::Json appSpecJson(const AppSpec& spec);
common::Result<AppSpec> parseAppSpec(const ipc::Json& json);

// How many processes of ours run it: node N, python 1 (its master forks the N workers).
uint32_t appProcessCount(const AppSpec& spec);

// The unix sockets of `spec` beneath --app-dir `app_dir`: APP_DIR/NAME/I.sock, one per
// process of ours (appProcessCount).
std::vector<std::string> appSocketPaths(const std::string& app_dir, const AppSpec& spec);

// The TCP ports of --connect (the host part is the app's business; Landlock sees ports).
std::vector<uint16_t> appConnectPorts(const AppSpec& spec);

// argv of process `index`, listening on `socket`; env of it, TMPDIR `tmp`.
std::vector<std::string> appArgv(const AppSpec& spec, const std::string& socket);
std::vector<std::string> appEnv(const AppSpec& spec, const std::string& socket,
                                const std::string& tmp);

}  // namespace scalws::controller
