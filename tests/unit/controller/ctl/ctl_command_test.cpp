// scalwsctl's argument parsing: every command, and every usage error (exit 2, nothing sent).
#include "controller/ctl/ctl_command.h"

#include <gtest/gtest.h>

namespace scalws::ctl {
namespace {

using Args = std::vector<std::string>;

CtlCommand parseOk(const Args& args, const char* env = nullptr) {
  auto cmd = parseCtlArgs(args, env);
  EXPECT_TRUE(cmd.ok()) << cmd.status().message();
  return cmd.ok() ? *cmd : CtlCommand();
}

TEST(CtlCommandTest, ReadCommands) {
  EXPECT_EQ(parseOk({"status"}).op, "status");
  EXPECT_EQ(parseOk({"cpu", "list"}).op, "cpu.list");
  EXPECT_EQ(parseOk({"instance", "list"}).op, "instance.list");
  CtlCommand show = parseOk({"instance", "show", "web", "--events", "5"});
  EXPECT_EQ(show.op, "instance.show");
  EXPECT_EQ(show.args, ipc::Json({{"name", "web"}, {"events", 5}}));
  EXPECT_FALSE(show.write);
  EXPECT_EQ(parseOk({"instance", "logs", "web", "--limit=7"}).args["limit"], 7);
}

TEST(CtlCommandTest, AddWithEveryOption) {
  CtlCommand add = parseOk({"instance", "add", "web", "--config", "site.toml", "--mode", "single",
                            "--cpus", "2", "--user", "www-data", "--shared-cpus"});
  EXPECT_EQ(add.op, "instance.add");
  EXPECT_TRUE(add.write);
  EXPECT_EQ(add.config_file, "site.toml");
  EXPECT_EQ(add.args, ipc::Json({{"name", "web"},
                                 {"mode", "single"},
                                 {"cpus", 2},
                                 {"user", "www-data"},
                                 {"shared_cpus", true}}));
}

TEST(CtlCommandTest, ActionsAndSet) {
  for (const char* action : {"start", "stop", "restart", "reload", "remove"}) {
    CtlCommand c = parseOk({"instance", action, "web"});
    EXPECT_EQ(c.op, std::string("instance.") + action);
    EXPECT_TRUE(c.write);
    EXPECT_EQ(c.args, ipc::Json({{"name", "web"}}));
  }
  CtlCommand set = parseOk({"instance", "set", "web", "--config=/etc/web.toml"});
  EXPECT_EQ(set.config_file, "/etc/web.toml");
}

TEST(CtlCommandTest, SocketAndJsonAnywhere) {
  EXPECT_EQ(parseOk({"status"}).socket, kDefaultSocket);
  EXPECT_EQ(parseOk({"status"}, "/env.sock").socket, "/env.sock");
  EXPECT_EQ(parseOk({"status"}, "").socket, kDefaultSocket);
  CtlCommand c = parseOk({"--socket", "/flag.sock", "instance", "list", "--json"}, "/env.sock");
  EXPECT_EQ(c.socket, "/flag.sock");
  EXPECT_TRUE(c.json);
  EXPECT_TRUE(parseOk({"--json", "status"}).json);
  EXPECT_EQ(parseOk({"status", "--socket=/x.sock"}).socket, "/x.sock");
}

TEST(CtlCommandTest, HelpAndVersion) {
  EXPECT_TRUE(parseOk({"--help"}).help);
  EXPECT_TRUE(parseOk({"help"}).help);
  EXPECT_TRUE(parseOk({"instance", "--help"}).help);
  EXPECT_TRUE(parseOk({"--version"}).version);
}

TEST(CtlCommandTest, UsageErrors) {
  const std::vector<Args> bad = {
      {},
      {"bogus"},
      {"instance"},
      {"instance", "frobnicate", "web"},
      {"cpu"},
      {"instance", "show"},
      {"instance", "start"},
      {"instance", "start", "a", "b"},
      {"status", "extra"},
      {"instance", "add", "web"},                                    // no --config
      {"instance", "add", "web", "--config"},                        // no value
      {"instance", "add", "web", "--config", ""},                    // empty value
      {"instance", "add", "web", "--config", "f", "--mode", "x"},    // bad mode
      {"instance", "add", "web", "--config", "f", "--cpus", "0"},    // bad count
      {"instance", "add", "web", "--config", "f", "--cpus", "2x"},   // bad count
      {"instance", "add", "web", "--config", "f", "--cpus", "-1"},   // an unknown option
      {"instance", "add", "web", "--config", "f", "--config", "g"},  // twice
      {"instance", "add", "web", "--config", "f", "--shared-cpus=yes"},
      {"instance", "set", "web", "--config", "f", "--mode", "multi"},  // not for set
      {"instance", "start", "web", "--config", "f"},
      {"instance", "list", "--events", "3"},
      {"instance", "show", "web", "--events", "0"},
      {"status", "--socket"},
      {"status", "--socket", "a", "--socket", "b"},
      {"status", "-x"},
  };
  for (const Args& args : bad) {
    auto cmd = parseCtlArgs(args, nullptr);
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    EXPECT_FALSE(cmd.ok()) << joined;
    if (!cmd.ok()) {
      EXPECT_EQ(cmd.status().code(), common::StatusCode::kInvalidArgument) << joined;
      EXPECT_FALSE(cmd.status().message().empty());
    }
  }
}

TEST(CtlCommandTest, WritesWaitLongerThanReads) {
  EXPECT_GT(parseOk({"instance", "start", "w"}).timeout(), parseOk({"status"}).timeout());
}

}  // namespace
}  // namespace scalws::ctl
