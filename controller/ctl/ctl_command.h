// scalwsctl's command line, parsed without touching anything:
//
//   scalwsctl [--socket PATH] [--json] COMMAND
//     status
//     cpu list
//     instance list
//     instance show NAME [--events N]
//     instance logs NAME [--limit N]
//     instance metrics NAME [--since DURATION]   (5m, 1h, 24h, 7d, ...; default 5m)
//     instance add NAME --config FILE [--mode multi|single] [--cpus N] [--user USER]
//                                     [--shared-cpus]
//     instance set NAME --config FILE
//     instance remove NAME
//     instance start|stop|restart|reload NAME
//     instance reopen-logs [NAME | --all]        (no name: every running instance)
//     pool list
//     pool show NAME
//     pool add NAME --address unix:/PATH|tcp:HOST:PORT [--max-conns N]
//     pool add NAME --managed --user USER --processes N [--php-fpm PATH]
//     pool remove NAME
//     pool assign POOL INSTANCE [--as NAME]
//     pool release POOL
//
// --socket and --json may stand anywhere; the socket is --socket, else $SCALWS_SOCKET,
// else /run/scalws/control.sock. A malformed command line is a usage error (exit 2) found
// here, before any connection (a pool address's syntax included); what only the controller
// can judge (names, users, configs, CPUs) it refuses itself (exit 1). Either way nothing
// changes.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"
#include "ipc/message.h"

namespace scalws::ctl {

inline constexpr const char* kDefaultSocket = "/run/scalws/control.sock";

struct CtlCommand {
  std::string socket;
  bool json = false;
  bool help = false;
  bool version = false;
  std::string op;  // the op table name: "instance.add"
  ipc::Json args = ipc::Json::object();
  std::string config_file;  // for add/set: read by the caller into args.config
  bool write = false;       // changes state (and may wait for workers)

  std::chrono::milliseconds timeout() const;
};

// kInvalidArgument (usage error) with a message for people. env_socket: $SCALWS_SOCKET or
// nullptr.
common::Result<CtlCommand> parseCtlArgs(const std::vector<std::string>& args,
                                        const char* env_socket);

extern const char* const kCtlUsage;

// "90s", "5m", "1h", "24h", "7d" -> ms; from 10 s to 31 days. Usage errors otherwise.
common::Result<int64_t> parseSince(const std::string& text);

}  // namespace scalws::ctl
