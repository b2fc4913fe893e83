// scalwsctl's pool commands: what each sends, every usage error (exit 2, nothing sent), and
// how their results read.
#include <gtest/gtest.h>

#include "controller/ctl/ctl_command.h"
#include "controller/ctl/ctl_output.h"
#include "tests/support/ctl_args.h"

namespace scalws::ctl {
namespace {

using Args = std::vector<std::string>;
using ipc::Json;

using ::scalws::testing::parseCtlOk;

TEST(PoolCommandsTest, ReadsAndWrites) {
  EXPECT_EQ(parseCtlOk({"pool", "list"}).op, "pool.list");
  EXPECT_FALSE(parseCtlOk({"pool", "list"}).write);
  CtlCommand show = parseCtlOk({"pool", "show", "shop", "--json"});
  EXPECT_EQ(show.op, "pool.show");
  EXPECT_EQ(show.args, Json({{"name", "shop"}}));
  EXPECT_TRUE(show.json);
  for (const char* op : {"remove", "release"}) {
    CtlCommand c = parseCtlOk({"pool", op, "shop"});
    EXPECT_EQ(c.op, std::string("pool.") + op);
    EXPECT_TRUE(c.write);
    EXPECT_EQ(c.args, Json({{"name", "shop"}}));
  }
  CtlCommand assign = parseCtlOk({"pool", "assign", "shop-fpm", "shop", "--as", "main"});
  EXPECT_EQ(assign.op, "pool.assign");
  EXPECT_EQ(assign.args, Json({{"name", "shop-fpm"}, {"instance", "shop"}, {"as", "main"}}));
  EXPECT_EQ(parseCtlOk({"pool", "assign", "a", "b"}).args,
            Json({{"name", "a"}, {"instance", "b"}}));
}

TEST(PoolCommandsTest, AddExternalAndManaged) {
  CtlCommand ext =
      parseCtlOk({"pool", "add", "ext", "--address", "tcp:127.0.0.1:9000", "--max-conns", "16"});
  EXPECT_EQ(ext.op, "pool.add");
  EXPECT_TRUE(ext.write);
  EXPECT_EQ(ext.args,
            Json({{"name", "ext"}, {"address", "tcp:127.0.0.1:9000"}, {"max_conns", 16}}));
  EXPECT_EQ(parseCtlOk({"pool", "add", "u", "--address=unix:/run/php/fpm.sock"}).args,
            Json({{"name", "u"}, {"address", "unix:/run/php/fpm.sock"}}));
  CtlCommand managed = parseCtlOk({"pool", "add", "shop", "--managed", "--user", "shop",
                                   "--processes", "8", "--php-fpm", "/opt/php/sbin/php-fpm"});
  EXPECT_EQ(managed.args, Json({{"name", "shop"},
                                {"managed", true},
                                {"user", "shop"},
                                {"processes", 8},
                                {"php_fpm", "/opt/php/sbin/php-fpm"}}));
}

TEST(PoolCommandsTest, UsageErrors) {
  const std::vector<Args> bad = {
      {"pool"},
      {"pool", "frob"},
      {"pool", "show"},
      {"pool", "show", "a", "b"},
      {"pool", "assign", "a"},  // no instance
      {"pool", "assign", "a", "b", "c"},
      {"pool", "release"},
      {"pool", "list", "--as", "x"},
      {"pool", "remove", "a", "--managed"},
      {"pool", "add", "a"},                                       // neither kind
      {"pool", "add", "a", "--address"},                          // no value
      {"pool", "add", "a", "--address", "127.0.0.1:9000"},        // no scheme
      {"pool", "add", "a", "--address", "unix:run/fpm.sock"},     // relative
      {"pool", "add", "a", "--address", "tcp:php.example:9000"},  // a name: never resolved
      {"pool", "add", "a", "--address", "tcp:127.0.0.1:0"},       // port 0
      {"pool", "add", "a", "--address", "tcp:127.0.0.1:9000", "--max-conns", "0"},
      {"pool", "add", "a", "--address", "tcp:127.0.0.1:9000", "--max-conns", "65536"},
      {"pool", "add", "a", "--address", "tcp:127.0.0.1:9000", "--user", "x"},
      {"pool", "add", "a", "--address", "tcp:127.0.0.1:9000", "--processes", "2"},
      {"pool", "add", "a", "--managed"},  // no user, processes
      {"pool", "add", "a", "--managed", "--user", "x"},
      {"pool", "add", "a", "--managed", "--processes", "2"},
      {"pool", "add", "a", "--managed", "--user", "x", "--processes", "0"},
      {"pool", "add", "a", "--managed", "--user", "x", "--processes", "1025"},
      {"pool", "add", "a", "--managed", "--user", "x", "--processes", "2", "--address",
       "unix:/x.sock"},
      {"pool", "add", "a", "--managed", "--user", "x", "--processes", "2", "--max-conns", "2"},
      {"pool", "add", "a", "--managed", "--user", "x", "--processes", "2", "--php-fpm",
       "php-fpm"},  // relative
      {"pool", "add", "a", "--managed=yes", "--user", "x", "--processes", "2"},
      {"pool", "add", "a", "--managed", "--managed", "--user", "x", "--processes", "2"},
      {"pool", "add", "a", "--address", "unix:/x.sock", "--config", "f"},
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
  auto missing = parseCtlArgs({"pool", "assign", "a"}, nullptr);
  EXPECT_NE(missing.status().message().find("POOL INSTANCE"), std::string::npos)
      << missing.status().message();
}

TEST(PoolCommandsTest, OutputForPeople) {
  Json managed = {{"name", "shop"},
                  {"kind", "managed"},
                  {"address", "unix:/run/scalws/php/shop.sock"},
                  {"max_conns", 8},
                  {"instance", "web"},
                  {"as", "main"},
                  {"share", 4},
                  {"state", "running"},
                  {"user", "shop"},
                  {"processes", 8},
                  {"php_fpm", "/usr/sbin/php-fpm8.2"},
                  {"process",
                   {{"state", "running"},
                    {"pid", 321},
                    {"restarts", 2},
                    {"last_exit", "php-fpm (pid 300) killed by signal 9 (SIGKILL)"},
                    {"adopted", false},
                    {"socket_group", "web"},
                    {"config_path", "/var/lib/scalws/pools/shop/php-fpm.conf"},
                    {"log_path", "/var/lib/scalws/pools/shop/php-fpm.log"}}},
                  {"created_ms", 0},
                  {"updated_ms", 0}};
  Json external = {{"name", "ext"},   {"kind", "external"},  {"address", "tcp:127.0.0.1:9000"},
                   {"max_conns", 0},  {"instance", nullptr}, {"as", nullptr},
                   {"share", 0},      {"state", "external"}, {"process", nullptr},
                   {"created_ms", 0}, {"updated_ms", 0}};
  std::string list = renderResult("pool.list", {{"pools", {external, managed}}});
  EXPECT_EQ(list,
            "NAME  KIND      ADDRESS                         MAX_CONNS  INSTANCE     STATE     "
            "PID\n"
            "ext   external  tcp:127.0.0.1:9000              -          -            external  -\n"
            "shop  managed   unix:/run/scalws/php/shop.sock  8          web as main  running   "
            "321\n");
  EXPECT_EQ(renderResult("pool.list", {{"pools", Json::array()}}), "no PHP pools\n");
  std::string show = renderResult("pool.show", managed);
  EXPECT_NE(show.find("instance      web as main (4 kept connection(s) per worker loop)\n"),
            std::string::npos)
      << show;
  EXPECT_NE(show.find("state         running, pid 321, 2 restart(s)\n"), std::string::npos);
  EXPECT_NE(show.find("last exit     php-fpm (pid 300) killed by signal 9 (SIGKILL)\n"),
            std::string::npos);
  EXPECT_NE(show.find("log           /var/lib/scalws/pools/shop/php-fpm.log\n"), std::string::npos);
  EXPECT_NE(renderResult("pool.show", external).find("max conns     unknown"), std::string::npos);
  Json assigned = managed;
  assigned["replaced"] = "old";
  EXPECT_EQ(renderResult("pool.assign", assigned),
            "pool shop assigned to instance web as main (replacing pool old)\n"
            "running workers take it on `scalwsctl instance reload web`\n");
  EXPECT_EQ(renderResult("pool.remove", Json::object()), "removed\n");
}

}  // namespace
}  // namespace scalws::ctl
