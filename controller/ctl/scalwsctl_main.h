// scalwsctl: parse (ctl_command.h), read the config file when the command has one, call
// the controller over the control socket (ipc/blocking_client.h), print (ctl_output.h or
// --json). Exit codes: 0 done, 1 the operation failed or was refused (message on stderr),
// 2 usage error (nothing was sent).
#pragma once

#include <string>
#include <vector>

namespace scalws::ctl {

int scalwsctlMain(const std::vector<std::string>& args, const char* env_socket);

}  // namespace scalws::ctl
