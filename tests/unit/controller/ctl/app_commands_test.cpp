// scalwsctl's app commands: what each sends, and every usage error (exit 2, nothing sent).
#include <gtest/gtest.h>

#include "controller/ctl/ctl_command.h"
#include "tests/support/ctl_args.h"

namespace scalws::ctl {
namespace {

using Args = std::vector<std::string>;
using ipc::Json;

using ::scalws::testing::parseCtlOk;

TEST(AppCommandsTest, ReadsAndWrites) {
  EXPECT_EQ(parseCtlOk({"app", "list"}).op, "app.list");
  EXPECT_FALSE(parseCtlOk({"app", "list"}).write);
  CtlCommand show = parseCtlOk({"app", "show", "api", "--json"});
  EXPECT_EQ(show.op, "app.show");
  EXPECT_FALSE(show.write);
  EXPECT_EQ(show.args, Json({{"name", "api"}}));
  EXPECT_TRUE(show.json);
  for (const char* op : {"remove", "restart", "release"}) {
    CtlCommand c = parseCtlOk({"app", op, "api"});
    EXPECT_EQ(c.op, std::string("app.") + op);
    EXPECT_TRUE(c.write);
    EXPECT_EQ(c.args, Json({{"name", "api"}}));
  }
  CtlCommand logs = parseCtlOk({"app", "logs", "api", "--limit", "50"});
  EXPECT_EQ(logs.op, "app.logs");
  EXPECT_FALSE(logs.write);
  EXPECT_EQ(logs.args, Json({{"name", "api"}, {"limit", 50}}));
  CtlCommand assign = parseCtlOk({"app", "assign", "api", "shop", "--as", "backend"});
  EXPECT_EQ(assign.op, "app.assign");
  EXPECT_TRUE(assign.write);
  EXPECT_EQ(assign.args, Json({{"name", "api"}, {"instance", "shop"}, {"as", "backend"}}));
  EXPECT_EQ(parseCtlOk({"app", "assign", "a", "b"}).args, Json({{"name", "a"}, {"instance", "b"}}));
}

TEST(AppCommandsTest, AddNode) {
  CtlCommand add = parseCtlOk({"app", "add", "api", "--runtime", "node", "--entry",
                               "/srv/api/server.js", "--processes", "2", "--user", "api"});
  EXPECT_EQ(add.op, "app.add");
  EXPECT_TRUE(add.write);
  EXPECT_EQ(add.args, Json({{"name", "api"},
                            {"runtime", "node"},
                            {"entry", "/srv/api/server.js"},
                            {"processes", 2},
                            {"user", "api"},
                            {"env", Json::array()},
                            {"writable", Json::array()},
                            {"connect", Json::array()}}));
}

TEST(AppCommandsTest, AddPythonWithListsAndMemory) {
  // Repeatable options keep their order; --memory is sent in bytes.
  CtlCommand wsgi = parseCtlOk({"app",
                                "add",
                                "web",
                                "--runtime",
                                "python",
                                "--wsgi",
                                "app:application",
                                "--processes",
                                "4",
                                "--user",
                                "web",
                                "--dir",
                                "/srv/web",
                                "--env",
                                "A=1",
                                "--env",
                                "B=two",
                                "--writable",
                                "/srv/web/uploads",
                                "--connect",
                                "127.0.0.1:5432",
                                "--memory",
                                "512m"});
  EXPECT_EQ(wsgi.args, Json({{"name", "web"},
                             {"runtime", "python-wsgi"},
                             {"target", "app:application"},
                             {"processes", 4},
                             {"user", "web"},
                             {"dir", "/srv/web"},
                             {"memory_bytes", 512ull << 20},
                             {"env", {"A=1", "B=two"}},
                             {"writable", {"/srv/web/uploads"}},
                             {"connect", {"127.0.0.1:5432"}}}));
  CtlCommand asgi = parseCtlOk({"app", "add", "ws", "--runtime", "python", "--asgi", "main:app",
                                "--processes", "1", "--user", "ws"});
  EXPECT_EQ(asgi.args["runtime"], "python-asgi");
  EXPECT_EQ(asgi.args["target"], "main:app");
}

TEST(AppCommandsTest, UsageErrors) {
  const Args node = {"--runtime",   "node", "--entry", "/srv/a.js",
                     "--processes", "1",    "--user",  "a"};
  auto add = [&](Args extra) {
    Args args = {"app", "add", "a"};
    args.insert(args.end(), node.begin(), node.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  };
  const std::vector<Args> bad = {
      {"app"},
      {"app", "frob"},
      {"app", "show"},
      {"app", "show", "a", "b"},
      {"app", "assign", "a"},  // no instance
      {"app", "assign", "a", "b", "c"},
      {"app", "release"},
      {"app", "restart", "a", "--as", "x"},
      {"app", "logs", "a", "--limit", "0"},
      {"app", "logs", "a", "--limit", "1001"},
      {"app", "list", "--runtime", "node"},
      {"app", "add", "a"},  // no runtime
      {"app", "add", "a", "--runtime", "ruby", "--processes", "1", "--user", "a"},
      {"app", "add", "a", "--runtime", "node", "--processes", "1", "--user", "a"},    // no entry
      {"app", "add", "a", "--runtime", "python", "--processes", "1", "--user", "a"},  // no target
      {"app", "add", "a", "--runtime", "python", "--wsgi", "m:a", "--asgi", "m:b", "--processes",
       "1", "--user", "a"},
      {"app", "add", "a", "--runtime", "python", "--entry", "/srv/a.py", "--wsgi", "m:a",
       "--processes", "1", "--user", "a"},
      {"app", "add", "a", "--runtime", "node", "--entry", "/srv/a.js", "--user", "a"},
      {"app", "add", "a", "--runtime", "node", "--entry", "/srv/a.js", "--processes", "1"},
      add({"--wsgi", "m:a"}),  // python's option on node
      add({"--memory", "0"}),
      add({"--memory", "lots"}),
      add({"--env"}),      // no value
      add({"--managed"}),  // not an app option
  };
  for (const Args& args : bad) {
    std::string joined;
    for (const std::string& a : args) joined += a + " ";
    auto cmd = parseCtlArgs(args, nullptr);
    ASSERT_FALSE(cmd.ok()) << joined;
    EXPECT_EQ(cmd.status().code(), common::StatusCode::kInvalidArgument) << joined;
  }
  // --processes out of range; the message names the option.
  auto zero = parseCtlArgs({"app", "add", "a", "--runtime", "node", "--entry", "/srv/a.js",
                            "--processes", "0", "--user", "a"},
                           nullptr);
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("--processes"), std::string::npos);
  auto many = parseCtlArgs({"app", "add", "a", "--runtime", "node", "--entry", "/srv/a.js",
                            "--processes", "257", "--user", "a"},
                           nullptr);
  EXPECT_FALSE(many.ok());
}

}  // namespace
}  // namespace scalws::ctl
