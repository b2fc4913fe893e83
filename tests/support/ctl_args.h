// scalwsctl argument parsing for the ctl tests. Header-only: scalws_test_support does not
// link scalws_ctl, the tests that include this do.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "controller/ctl/ctl_command.h"

namespace scalws::testing {

// The command `args` parse to (env_socket: what $SCALWS_SOCKET holds, or nullptr), failing
// the test when they do not.
inline ctl::CtlCommand parseCtlOk(const std::vector<std::string>& args,
                                  const char* env_socket = nullptr) {
  auto cmd = ctl::parseCtlArgs(args, env_socket);
  EXPECT_TRUE(cmd.ok()) << cmd.status().message();
  return cmd.ok() ? *cmd : ctl::CtlCommand();
}

}  // namespace scalws::testing
