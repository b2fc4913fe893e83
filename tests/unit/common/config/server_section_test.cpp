// [server]: every key's errors, with the exact line an operator sees.
#include <gtest/gtest.h>

#include "tests/unit/common/config/load_helpers.h"

namespace scalws::common::config {
namespace {

using testing::loadSnippet;
using testing::snippetErrors;

TEST(ServerSection, MustBeATable) {
  EXPECT_EQ(snippetErrors("server = 1\n"),
            "t.toml:1:10: server: expected a table, found an integer");
}

TEST(ServerSection, UnknownKeySuggestsTheClosestKnownOne) {
  EXPECT_EQ(snippetErrors("[server]\nwrokers = 2\n"),
            "t.toml:2:1: server: unknown key \"wrokers\" (did you mean \"workers\"?)");
  EXPECT_EQ(snippetErrors("[server]\nmax_boddy = 2\n"),
            "t.toml:2:1: server: unknown key \"max_boddy\" (did you mean \"max_body\"?)");
}

TEST(ServerSection, Workers) {
  EXPECT_EQ(snippetErrors("[server]\nworkers = 0\n"),
            "t.toml:2:11: server.workers: must be between 1 and 1024, found 0");
  EXPECT_EQ(snippetErrors("[server]\nworkers = 1025\n"),
            "t.toml:2:11: server.workers: must be between 1 and 1024, found 1025");
  EXPECT_EQ(snippetErrors("[server]\nworkers = -3\n"),
            "t.toml:2:11: server.workers: must be between 1 and 1024, found -3");
  EXPECT_EQ(snippetErrors("[server]\nworkers = \"2\"\n"),
            "t.toml:2:11: server.workers: expected an integer, found a string");
  EXPECT_EQ(snippetErrors("[server]\nworkers = 2.0\n"),
            "t.toml:2:11: server.workers: expected an integer, found a float");
  EXPECT_EQ(loadSnippet("[server]\nworkers = 1024\n").server->workers, 1024u);
}

TEST(ServerSection, Mode) {
  EXPECT_EQ(
      snippetErrors("[server]\nmode = \"threads\"\n"),
      "t.toml:2:8: server.mode: unknown value \"threads\" (expected \"multi\" or \"single\")");
  EXPECT_EQ(snippetErrors("[server]\nmode = true\n"),
            "t.toml:2:8: server.mode: expected a string, found a boolean");
  EXPECT_EQ(loadSnippet("[server]\nmode = \"multi\"\n").server->mode, WorkerMode::kMulti);
}

TEST(ServerSection, Cpus) {
  EXPECT_EQ(snippetErrors("[server]\ncpus = 1\n"),
            "t.toml:2:8: server.cpus: expected an array, found an integer");
  EXPECT_EQ(snippetErrors("[server]\ncpus = [0, \"1\", -1, 1024, 0]\n"),
            "t.toml:2:12: server.cpus[1]: expected an integer, found a string\n"
            "t.toml:2:17: server.cpus[2]: must be between 0 and 1023, found -1\n"
            "t.toml:2:21: server.cpus[3]: must be between 0 and 1023, found 1024\n"
            "t.toml:2:27: server.cpus[4]: CPU 0 is listed twice");
  EXPECT_TRUE(loadSnippet("[server]\ncpus = []\n").server->cpus.empty());
}

TEST(ServerSection, User) {
  EXPECT_EQ(snippetErrors("[server]\nuser = 33\n"),
            "t.toml:2:8: server.user: expected a string, found an integer");
}

TEST(ServerSection, Sandbox) {
  EXPECT_EQ(loadSnippet("[server]\nsandbox = false\n").server->sandbox, SandboxMode::kOff);
  EXPECT_EQ(loadSnippet("[server]\nsandbox = true\n").server->sandbox, SandboxMode::kOn);
  EXPECT_EQ(snippetErrors("[server]\nsandbox = \"yes\"\n"),
            "t.toml:2:11: server.sandbox: expected true, false or \"required\", found \"yes\"");
  EXPECT_EQ(snippetErrors("[server]\nsandbox = 1\n"),
            "t.toml:2:11: server.sandbox: expected true, false or \"required\", found an integer");
}

TEST(ServerSection, SeccompAction) {
  EXPECT_EQ(loadSnippet("[server]\n").server->seccomp_action, SeccompAction::kErrno);
  EXPECT_EQ(loadSnippet("[server]\nseccomp_action = \"kill\"\n").server->seccomp_action,
            SeccompAction::kKill);
  EXPECT_NE(snippetErrors("[server]\nseccomp_action = \"trap\"\n")
                .find("t.toml:2:18: server.seccomp_action: unknown value \"trap\""),
            std::string::npos);
}

TEST(ServerSection, Timeouts) {
  EXPECT_EQ(snippetErrors("[server]\nheader_timeout = \"10 s\"\n"),
            "t.toml:2:18: server.header_timeout: invalid duration \"10 s\" (expected a number "
            "with a ms, s, m, h or d suffix, e.g. \"30s\" or \"500ms\"; a plain number is "
            "seconds)");
  EXPECT_EQ(snippetErrors("[server]\nheader_timeout = 0\n"),
            "t.toml:2:18: server.header_timeout: must be greater than zero");
  EXPECT_EQ(snippetErrors("[server]\nbody_timeout = \"0ms\"\n"),
            "t.toml:2:16: server.body_timeout: must be greater than zero");
  EXPECT_EQ(snippetErrors("[server]\nsend_timeout = -1\n"),
            "t.toml:2:16: server.send_timeout: must not be negative, found -1");
  EXPECT_EQ(snippetErrors("[server]\nkeepalive_timeout = 1.5\n"),
            "t.toml:2:21: server.keepalive_timeout: expected a duration (a string such as "
            "\"30s\" or an integer number of seconds), found a float");
  EXPECT_EQ(snippetErrors("[server]\nshutdown_timeout = 9223372036854775807\n"),
            "t.toml:2:20: server.shutdown_timeout: duration of 9223372036854775807 seconds is "
            "too large");
  // Zero is meaningful for these two: no keep-alive, no drain.
  ServerConfig zero =
      *loadSnippet("[server]\nkeepalive_timeout = 0\nshutdown_timeout = \"0s\"\n").server;
  EXPECT_EQ(zero.keepalive_timeout, 0u);
  EXPECT_EQ(zero.shutdown_timeout, 0u);
}

TEST(ServerSection, Sizes) {
  EXPECT_EQ(snippetErrors("[server]\nmax_body = -1\n"),
            "t.toml:2:12: server.max_body: must not be negative, found -1");
  EXPECT_EQ(snippetErrors("[server]\nmax_body = \"1.5m\"\n"),
            "t.toml:2:12: server.max_body: invalid size \"1.5m\" (expected a byte count, "
            "optionally with a k, m or g suffix, e.g. \"64k\" or \"10m\")");
  EXPECT_EQ(snippetErrors("[server]\nmax_body = [1]\n"),
            "t.toml:2:12: server.max_body: expected a size (a string such as \"10m\" or an "
            "integer number of bytes), found an array");
  EXPECT_EQ(snippetErrors("[server]\nmax_request_line = 0\n"),
            "t.toml:2:20: server.max_request_line: must be greater than zero");
  EXPECT_EQ(snippetErrors("[server]\nmax_header_size = \"0k\"\n"),
            "t.toml:2:19: server.max_header_size: must be greater than zero");
  EXPECT_EQ(loadSnippet("[server]\nmax_body = 0\n").server->max_body, 0u);
}

TEST(ServerSection, Counts) {
  EXPECT_EQ(snippetErrors("[server]\nmax_headers = 0\n"),
            "t.toml:2:15: server.max_headers: must be between 1 and 4294967295, found 0");
  EXPECT_EQ(snippetErrors("[server]\nmax_requests_per_connection = 4294967296\n"),
            "t.toml:2:31: server.max_requests_per_connection: must be between 1 and 4294967295, "
            "found 4294967296");
  EXPECT_EQ(snippetErrors("[server]\nmax_connections = \"10k\"\n"),
            "t.toml:2:19: server.max_connections: expected an integer, found a string");
}

TEST(ServerSection, ServerHeader) {
  EXPECT_EQ(loadSnippet("[server]\nserver_header = false\n").server->server_header, "");
  EXPECT_EQ(loadSnippet("[server]\nserver_header = \"\"\n").server->server_header, "");
  EXPECT_EQ(snippetErrors("[server]\nserver_header = true\n"),
            "t.toml:2:17: server.server_header: expected a string or false, found true");
  EXPECT_EQ(snippetErrors("[server]\nserver_header = 1\n"),
            "t.toml:2:17: server.server_header: expected a string or false, found an integer");
  EXPECT_EQ(snippetErrors("[server]\nserver_header = \"a\\r\\nX-Injected: 1\"\n"),
            "t.toml:2:17: server.server_header: must not contain control characters");
}

TEST(ServerSection, Logs) {
  ServerConfig off = *loadSnippet("[server]\naccess_log = \"\"\nerror_log = \"\"\n").server;
  EXPECT_EQ(off.access_log, "");
  EXPECT_EQ(off.error_log, "");
  EXPECT_EQ(loadSnippet("[server]\nerror_log = \"e.log\"\n").server->error_log,
            "/etc/scalws/e.log");
  EXPECT_EQ(snippetErrors("[server]\naccess_log = false\n"),
            "t.toml:2:14: server.access_log: expected a string, found a boolean");
  EXPECT_EQ(snippetErrors("[server]\naccess_log_format = \"clf\"\n"),
            "t.toml:2:21: server.access_log_format: unknown value \"clf\" (expected \"combined\" "
            "or \"json\")");
  EXPECT_EQ(snippetErrors("[server]\nlog_level = \"verbose\"\n"),
            "t.toml:2:13: server.log_level: unknown value \"verbose\" (expected \"debug\", "
            "\"info\", \"notice\", \"warn\", \"error\" or \"alert\")");
  EXPECT_EQ(loadSnippet("[server]\nlog_level = \"warn\"\n").server->log_level, "warn");
}

}  // namespace
}  // namespace scalws::common::config
