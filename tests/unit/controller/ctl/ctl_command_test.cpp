// scalwsctl's argument parsing: every command, and every usage error (exit 2, nothing sent).
#include "controller/ctl/ctl_command.h"

#include <gtest/gtest.h>

#include "tests/support/ctl_args.h"

namespace scalws::ctl {
namespace {

using Args = std::vector<std::string>;

using ::scalws::testing::parseCtlOk;

TEST(CtlCommandTest, ReadCommands) {
  EXPECT_EQ(parseCtlOk({"status"}).op, "status");
  EXPECT_EQ(parseCtlOk({"cpu", "list"}).op, "cpu.list");
  EXPECT_EQ(parseCtlOk({"instance", "list"}).op, "instance.list");
  CtlCommand show = parseCtlOk({"instance", "show", "web", "--events", "5"});
  EXPECT_EQ(show.op, "instance.show");
  EXPECT_EQ(show.args, ipc::Json({{"name", "web"}, {"events", 5}}));
  EXPECT_FALSE(show.write);
  EXPECT_EQ(parseCtlOk({"instance", "logs", "web", "--limit=7"}).args["limit"], 7);
}

TEST(CtlCommandTest, AddWithEveryOption) {
  CtlCommand add = parseCtlOk({"instance", "add", "web", "--config", "site.toml", "--mode",
                               "single", "--cpus", "2", "--user", "www-data", "--shared-cpus"});
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
    CtlCommand c = parseCtlOk({"instance", action, "web"});
    EXPECT_EQ(c.op, std::string("instance.") + action);
    EXPECT_TRUE(c.write);
    EXPECT_EQ(c.args, ipc::Json({{"name", "web"}}));
  }
  CtlCommand set = parseCtlOk({"instance", "set", "web", "--config=/etc/web.toml"});
  EXPECT_EQ(set.config_file, "/etc/web.toml");
}

TEST(CtlCommandTest, CachePurgeAndShow) {
  CtlCommand url =
      parseCtlOk({"instance", "cache", "purge", "web", "--url", "https://Shop.Example:8443/a?b=1"});
  EXPECT_EQ(url.op, "instance.cache.purge");
  EXPECT_TRUE(url.write);
  // As the cache keys requests: the host in lower case, no port.
  EXPECT_EQ(
      url.args,
      ipc::Json({{"name", "web"}, {"scope", "url"}, {"target", "https://shop.example/a?b=1"}}));
  CtlCommand prefix = parseCtlOk({"instance", "cache", "purge", "web", "--prefix",
                                  "http://[::1]:80/blog/", "--cache", "pages"});
  EXPECT_EQ(prefix.args, ipc::Json({{"name", "web"},
                                    {"cache", "pages"},
                                    {"scope", "prefix"},
                                    {"target", "http://[::1]/blog/"}}));
  EXPECT_EQ(parseCtlOk({"instance", "cache", "purge", "web", "--all"}).args,
            ipc::Json({{"name", "web"}, {"scope", "all"}}));
  CtlCommand show = parseCtlOk({"instance", "cache", "show", "web"});
  EXPECT_EQ(show.op, "instance.cache.show");
  EXPECT_FALSE(show.write);
  for (const Args& bad :
       std::vector<Args>{{"instance", "cache", "purge", "web"},
                         {"instance", "cache", "purge", "web", "--all", "--prefix", "http://a/"},
                         {"instance", "cache", "purge", "web", "--url", "/relative"},
                         {"instance", "cache", "purge", "web", "--url", "ftp://a/b"},
                         {"instance", "cache", "purge", "web", "--url", "http://a/b c"},
                         {"instance", "cache", "purge", "web", "--all=yes"},
                         {"instance", "cache", "purge", "web", "--all", "--cache", "no/such"},
                         {"instance", "cache", "purge", "--all"},
                         {"instance", "cache", "show", "web", "--all"},
                         {"instance", "cache"}}) {
    EXPECT_FALSE(parseCtlArgs(bad, nullptr).ok()) << bad.back();
  }
}

TEST(CtlCommandTest, ReopenLogs) {
  CtlCommand one = parseCtlOk({"instance", "reopen-logs", "web"});
  EXPECT_EQ(one.op, "instance.reopen_logs");
  EXPECT_TRUE(one.write);
  EXPECT_EQ(one.args, ipc::Json({{"name", "web"}}));
  EXPECT_EQ(parseCtlOk({"instance", "reopen-logs", "--all"}).args, ipc::Json({{"all", true}}));
  EXPECT_EQ(parseCtlOk({"instance", "reopen-logs"}).args, ipc::Json({{"all", true}}));
  EXPECT_EQ(parseCtlOk({"--json", "instance", "reopen-logs", "--socket", "/s", "web"}).args,
            ipc::Json({{"name", "web"}}));
  // Usage errors (exit 2): found before any connection, so nothing is sent or changed.
  for (const Args& bad : std::vector<Args>{{"instance", "reopen-logs", "web", "--all"},
                                           {"instance", "reopen-logs", "--all", "web"},
                                           {"instance", "reopen-logs", "a", "b"},
                                           {"instance", "reopen-logs", "web", "--url", "x"},
                                           {"instance", "reopen-logs", "--all=yes"},
                                           {"instance", "reopen-logs", "--limit", "3"}}) {
    common::Result<CtlCommand> parsed = parseCtlArgs(bad, nullptr);
    ASSERT_FALSE(parsed.ok()) << bad.back();
    EXPECT_EQ(parsed.status().code(), common::StatusCode::kInvalidArgument) << bad.back();
  }
}

TEST(CtlCommandTest, SocketAndJsonAnywhere) {
  EXPECT_EQ(parseCtlOk({"status"}).socket, kDefaultSocket);
  EXPECT_EQ(parseCtlOk({"status"}, "/env.sock").socket, "/env.sock");
  EXPECT_EQ(parseCtlOk({"status"}, "").socket, kDefaultSocket);
  CtlCommand c = parseCtlOk({"--socket", "/flag.sock", "instance", "list", "--json"}, "/env.sock");
  EXPECT_EQ(c.socket, "/flag.sock");
  EXPECT_TRUE(c.json);
  EXPECT_TRUE(parseCtlOk({"--json", "status"}).json);
  EXPECT_EQ(parseCtlOk({"status", "--socket=/x.sock"}).socket, "/x.sock");
}

TEST(CtlCommandTest, HelpAndVersion) {
  EXPECT_TRUE(parseCtlOk({"--help"}).help);
  EXPECT_TRUE(parseCtlOk({"help"}).help);
  EXPECT_TRUE(parseCtlOk({"instance", "--help"}).help);
  EXPECT_TRUE(parseCtlOk({"--version"}).version);
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
  EXPECT_GT(parseCtlOk({"instance", "start", "w"}).timeout(), parseCtlOk({"status"}).timeout());
}

}  // namespace
}  // namespace scalws::ctl
