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

TEST(CtlOutputTest, ActionsSayWhereTheInstanceIs) {
  Json r = {{"name", "web"},        {"status", "failed"},   {"reason", "port in use"},
            {"desired", "running"}, {"assigned_cpus", "0"}, {"process_count", 0}};
  EXPECT_EQ(renderResult("instance.start", r),
            "instance web: failed (port in use), desired running, CPUs 0, 0 process(es)\n");
  EXPECT_EQ(renderResult("instance.remove", Json::object()), "removed\n");
}

}  // namespace
}  // namespace scalws::ctl
