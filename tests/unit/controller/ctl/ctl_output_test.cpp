#include "controller/ctl/ctl_output.h"

#include <gtest/gtest.h>

#include "controller/ctl/ctl_format.h"

namespace scalws::ctl {
namespace {

using ipc::Json;

TEST(CtlOutputTest, TablesAreAligned) {
  std::string t = renderTable({"NAME", "CPUS"}, {{"web", "0-1"}, {"a-long-name", "2"}});
  EXPECT_EQ(t,
            "NAME         CPUS\n"
            "web          0-1\n"
            "a-long-name  2\n");
}

TEST(CtlOutputTest, Durations) {
  EXPECT_EQ(formatDuration(0), "0s");
  EXPECT_EQ(formatDuration(250), "250ms");
  EXPECT_EQ(formatDuration(45'000), "45s");
  EXPECT_EQ(formatDuration(303'000), "5m 3s");
  EXPECT_EQ(formatDuration(7'800'000), "2h 10m");
  EXPECT_EQ(formatDuration(273'600'000), "3d 4h");
  EXPECT_EQ(formatTime(0), "-");
}

TEST(CtlOutputTest, AssignedInstanceSaysTheNameOnlyWhenItDiffers) {
  EXPECT_EQ(assignedInstance(Json{{"name", "p"}, {"instance", nullptr}}), "-");
  EXPECT_EQ(assignedInstance(Json{{"name", "p"}, {"instance", "web"}, {"as", "p"}}), "web");
  EXPECT_EQ(assignedInstance(Json{{"name", "p"}, {"instance", "web"}, {"as", "php"}}),
            "web as php");
  EXPECT_EQ(assignedInstance(Json{{"name", "p"}, {"instance", "a\x1b[2J"}, {"as", "p"}}),
            "a\\x1b[2J");
}

TEST(CtlOutputTest, InstanceListShowsEveryInstance) {
  Json result = {{"instances",
                  {{{"name", "web"},
                    {"mode", "multi"},
                    {"assigned_cpus", "0-1"},
                    {"shared_cpus", false},
                    {"user", "nobody"},
                    {"desired", "running"},
                    {"status", "running"},
                    {"reason", ""},
                    {"process_count", 2}},
                   {{"name", "api"},
                    {"mode", "single"},
                    {"assigned_cpus", "1"},
                    {"shared_cpus", true},
                    {"user", "www-data"},
                    {"desired", "running"},
                    {"status", "failed"},
                    {"reason", "crash loop"},
                    {"process_count", 0}}}}};
  std::string out = renderResult("instance.list", result);
  EXPECT_NE(out.find("NAME"), std::string::npos);
  EXPECT_NE(out.find("web   multi   0-1"), std::string::npos) << out;
  EXPECT_NE(out.find("1 (shared)"), std::string::npos) << out;
  EXPECT_NE(out.find("crash loop"), std::string::npos) << out;
  EXPECT_EQ(renderResult("instance.list", {{"instances", Json::array()}}), "no instances\n");
}

TEST(CtlOutputTest, CpuList) {
  Json result = {
      {"cpus",
       {{{"cpu", 0}, {"in_host", true}, {"exclusive", "web"}, {"shared", Json::array()}},
        {{"cpu", 1}, {"in_host", true}, {"exclusive", ""}, {"shared", {"a", "b"}}},
        {{"cpu", 2}, {"in_host", false}, {"exclusive", ""}, {"shared", Json::array()}}}}};
  std::string out = renderResult("cpu.list", result);
  EXPECT_NE(out.find("0    exclusive"), std::string::npos) << out;
  EXPECT_NE(out.find("shared"), std::string::npos);
  EXPECT_NE(out.find("a, b"), std::string::npos);
  EXPECT_NE(out.find("free (not a host CPU now)"), std::string::npos) << out;
}

TEST(CtlOutputTest, ShowListsProcessesAndEvents) {
  Json result = {
      {"name", "web"},
      {"mode", "multi"},
      {"cpus", 2},
      {"assigned_cpus", "0-1"},
      {"shared_cpus", false},
      {"user", "nobody"},
      {"desired", "running"},
      {"status", "running"},
      {"reason", ""},
      {"process_count", 1},
      {"config_path", "/etc/web.toml"},
      {"config", {{"listen", {"127.0.0.1:80"}}, {"routes", 3}}},
      {"reload_pending", true},
      {"processes",
       {{{"slot", 0},
         {"pid", 4242},
         {"state", "ready"},
         {"cpus", "0"},
         {"started_ms", 1},
         {"restarts", 2},
         {"attached", true}},
        {{"slot", 1},
         {"pid", 0},
         {"state", "restarting"},
         {"cpus", "1"},
         {"restart_in_ms", 400},
         {"restarts", 1},
         {"attached", false}}}},
      {"events", {{{"id", 1}, {"time_ms", 1}, {"kind", "instance.added"}, {"message", "added"}}}}};
  std::string out = renderResult("instance.show", result);
  for (const char* want : {"4242", "ready (re-attached)", "restarting in 400ms", "127.0.0.1:80",
                           "reload to apply", "instance.added", "0-1 (2 wanted, exclusive)"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
}

TEST(CtlOutputTest, ShowListsTheProxysServersOnlyWhenThereAreAny) {
  Json server = {
      {"address", "10.0.0.7:9000"}, {"backup", false},    {"loops", 2},           {"loops_down", 1},
      {"down_since_ms", 1},         {"failures", 7},      {"active", 3},          {"idle", 4},
      {"requests", 1234},           {"responses_5xx", 5}, {"connect_failures", 6}};
  Json result = {{"name", "web"}, {"upstreams", {{{"name", "api"}, {"servers", {server}}}}}};
  std::string out = renderResult("instance.show", result);
  for (const char* want : {"upstreams:", "api", "10.0.0.7:9000", "down since ", "in 1 of 2 loop(s)",
                           "1234", "CONNECT_FAILURES"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << "\n" << out;
  }
  result["upstreams"] = Json::array();
  EXPECT_EQ(renderResult("instance.show", result).find("upstreams:"), std::string::npos);
}

TEST(CtlOutputTest, ActionsSayWhereTheInstanceIs) {
  Json r = {{"name", "web"},        {"status", "failed"},   {"reason", "port in use"},
            {"desired", "running"}, {"assigned_cpus", "0"}, {"process_count", 0}};
  EXPECT_EQ(renderResult("instance.start", r),
            "instance web: failed (port in use), desired running, CPUs 0, 0 process(es)\n");
  EXPECT_EQ(renderResult("instance.remove", Json::object()), "removed\n");
}

}  // namespace
}  // namespace scalws::ctl

namespace scalws::ctl {
namespace {

// What a hostile worker could put in a result: wrong types where strings and numbers go,
// and terminal escapes in every string. Nothing throws, nothing escapes unescaped.
TEST(CtlOutputTest, AnyShapeAndAnyBytesRenderSafely) {
  Json evil = {{"name", "web"},
               {"status", "running\x1b[2J"},
               {"user", 7},
               {"cpus", "two"},
               {"config", {{"listen", {1, "\x1b]0;x\x07"}}, {"routes", "many"}}},
               {"php_pools", "none"},
               {"processes",
                {{{"pid", "12\n34"},
                  {"state", {{"a", 1}}},
                  {"checked",
                   {{"uid", "x"},
                    {"seccomp", 2},
                    {"user",
                     "\x9b"
                     "31m"}}},
                  {"sandbox",
                   {{"identity", {{"user", 7}, {"uid", "root\x1b[31m"}}},
                    {"no_new_privs", "yes"},
                    {"landlock", {{"paths", "\x1b]0;owned\x07"}}},
                    {"seccomp", {{"action", {{"nested", true}}}}},
                    {"degraded", {1, "line\nscalws-controller: forged"}}}}}}},
               {"events", {{{"kind", "\x1b[1m"}, {"message", "a\rb"}, {"time_ms", "now"}}}}};
  for (const char* op : {"instance.show", "instance.list", "status", "pool.show", "pool.list",
                         "instance.logs", "instance.metrics", "cpu.list", "instance.start"}) {
    std::string out = renderResult(op, evil);
    for (char c : out) {
      if (c == '\n') continue;
      EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << op << ": " << out;
    }
    EXPECT_EQ(out.find("\xc2\x9b"), std::string::npos) << op;  // no C1 CSI either
  }
  std::string show = renderResult("instance.show", evil);
  EXPECT_NE(show.find("running\\x1b[2J"), std::string::npos) << show;
  EXPECT_NE(show.find("line\\nscalws-controller: forged"), std::string::npos) << show;
  EXPECT_EQ(show.find("\nscalws-controller: forged"), std::string::npos) << show;
}

TEST(CtlOutputTest, EscapesKeepUtf8AndShowEverythingElse) {
  EXPECT_EQ(escapeText("µs ok"), "µs ok");
  EXPECT_EQ(escapeText("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(escapeText("tab\there\\"), "tab\\there\\\\");
  EXPECT_EQ(escapeText("\xc2\x9b"
                       "2J"),
            "\\xc2\\x9b2J");
  EXPECT_EQ(escapeText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escapeText("\xe2\x82"), "\\xe2\\x82");  // truncated UTF-8
}

}  // namespace
}  // namespace scalws::ctl

namespace scalws::ctl {
namespace {

TEST(CtlOutputTest, StatusSaysWhenTheStateDiskIsFull) {
  Json r = {{"pid", 1}, {"instances", {{"total", 0}}}};
  EXPECT_EQ(renderResult("status", r).find("state disk"), std::string::npos);  // older ones
  r["state_disk"] = {{"full", false}, {"free_bytes", 3 * 1024 * 1024}, {"message", ""}};
  std::string ok = renderResult("status", r);
  EXPECT_NE(ok.find("state disk"), std::string::npos) << ok;
  EXPECT_NE(ok.find("ok ("), std::string::npos) << ok;
  r["state_disk"] = {{"full", true},
                     {"free_bytes", 0},
                     {"message", "no space left on device: changes to it are refused"}};
  std::string full = renderResult("status", r);
  EXPECT_NE(full.find("FULL ("), std::string::npos) << full;
  EXPECT_NE(full.find("no space left on device: changes to it are refused"), std::string::npos)
      << full;
}

}  // namespace
}  // namespace scalws::ctl
