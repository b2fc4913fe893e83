// AppCgroups against a tree in a temporary directory that looks like cgroupfs: which
// hierarchy the probe picks and why it refuses, where an app's cgroups go, what setUp()
// and prepare() write (cgroup v2's leaf for the controller, the memory controller handed
// down, the limits of both versions), the figures read back, membership, removal.
// (The kernel's side — joining, OOM kills — is driven by test_controller_apps.py.)
#include "controller/apps/app_cgroup.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller {
namespace {

constexpr const char* kV2Mount =
    "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 "
    "rw,nsdelegate,memory_recursiveprot\n";
constexpr const char* kHybridMounts =
    "25 24 0:22 / /sys/fs/cgroup/unified rw,nosuid shared:5 - cgroup2 cgroup2 rw\n"
    "26 24 0:23 / /sys/fs/cgroup/memory rw,nosuid shared:8 - cgroup cgroup rw,memory\n"
    "27 24 0:24 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n";

class AppCgroupsTest : public ::testing::Test {
 protected:
  // A directory of the fake tree, with files as the kernel would show them.
  void cgroupDir(const std::string& path, std::map<std::string, std::string> files) {
    std::filesystem::create_directories(dir_.path() + path);
    for (const auto& [name, text] : files) write(path + "/" + name, text);
  }
  void write(const std::string& path, const std::string& text) {
    std::ofstream(dir_.path() + path) << text;
  }
  std::string read(const std::string& path) {
    std::ifstream in(dir_.path() + path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }
  bool exists(const std::string& path) { return std::filesystem::exists(dir_.path() + path); }
  CgroupHost host(std::string self_cgroup, std::string mountinfo) {
    return CgroupHost{dir_.path(), std::move(self_cgroup), std::move(mountinfo)};
  }

  scalws::testing::TempDir dir_;
};

TEST_F(AppCgroupsTest, V2OutsideSystemdMovesTheControllersCgroupIntoALeafFirst) {
  const std::string b = "/sys/fs/cgroup/user.slice/session-3.scope";
  cgroupDir(b, {{"cgroup.controllers", "cpu io memory pids\n"},
                {"cgroup.subtree_control", ""},
                {"cgroup.type", "domain\n"},
                {"cgroup.procs", "700\n701\n"}});
  AppCgroups cg =
      AppCgroups::probe(host("0::/user.slice/session-3.scope\n", kV2Mount), "scalws-apps-x");
  ASSERT_EQ(cg.version(), AppCgroups::Version::kV2) << cg.problem();
  EXPECT_EQ(cg.problem(), "");
  EXPECT_EQ(cg.describe(), "cgroup v2 " + dir_.path() + b);
  EXPECT_EQ(cg.pathOf("api", 1), dir_.path() + b + "/scalws-apps-x/api/1");

  ASSERT_TRUE(cg.prepare("api", 1, 64 << 20).ok());
  // Every process of the cgroup went into supervisor/ before memory was handed down.
  EXPECT_EQ(read(b + "/supervisor/cgroup.procs"), "700\n701\n");
  EXPECT_EQ(read(b + "/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(read(b + "/scalws-apps-x/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(read(b + "/scalws-apps-x/api/cgroup.subtree_control"), "+memory");
  EXPECT_EQ(read(b + "/scalws-apps-x/api/1/memory.max"), std::to_string(64 << 20));
  EXPECT_EQ(AppCgroups::procsFile(cg.pathOf("api", 1)),
            dir_.path() + b + "/scalws-apps-x/api/1/cgroup.procs");
}

TEST_F(AppCgroupsTest, V2InTheSupervisorLeafUsesItsParentAndMovesNothing) {
  const std::string b = "/sys/fs/cgroup/system.slice/scalws-controller.service";
  cgroupDir(b, {{"cgroup.controllers", "memory pids\n"},
                {"cgroup.subtree_control", "memory\n"},
                {"cgroup.type", "domain\n"}});
  cgroupDir(b + "/supervisor", {{"cgroup.procs", "42\n"}});
  AppCgroups cg = AppCgroups::probe(
      host("0::/system.slice/scalws-controller.service/supervisor\n", kV2Mount), "apps");
  ASSERT_EQ(cg.version(), AppCgroups::Version::kV2) << cg.problem();
  EXPECT_EQ(cg.pathOf("web", 0), dir_.path() + b + "/apps/web/0");
  cgroupDir(b + "/apps/web/0", {{"memory.swap.max", "max\n"}, {"memory.oom.group", "0\n"}});
  ASSERT_TRUE(cg.prepare("web", 0, 128 << 20).ok());
  EXPECT_EQ(read(b + "/supervisor/cgroup.procs"), "42\n");
  EXPECT_EQ(read(b + "/cgroup.subtree_control"), "memory\n");  // already handed down
  // No swap, and the OOM killer ends the whole group.
  EXPECT_EQ(read(b + "/apps/web/0/memory.swap.max"), "0");
  EXPECT_EQ(read(b + "/apps/web/0/memory.oom.group"), "1");
}

TEST_F(AppCgroupsTest, V2RefusesASystemdServicesOwnCgroup) {
  const std::string b = "/sys/fs/cgroup/system.slice/scalws-controller.service";
  cgroupDir(b, {{"cgroup.controllers", "memory pids\n"},
                {"cgroup.subtree_control", ""},
                {"cgroup.type", "domain\n"}});
  AppCgroups cg =
      AppCgroups::probe(host("0::/system.slice/scalws-controller.service\n", kV2Mount), "a");
  EXPECT_EQ(cg.version(), AppCgroups::Version::kNone);
  EXPECT_NE(cg.problem().find("DelegateSubgroup=supervisor"), std::string::npos) << cg.problem();
  EXPECT_FALSE(cg.prepare("x", 0, 1 << 30).ok());
}

TEST_F(AppCgroupsTest, V2WithoutTheMemoryControllerSaysSo) {
  cgroupDir("/sys/fs/cgroup/box", {{"cgroup.controllers", "cpu pids\n"},
                                   {"cgroup.subtree_control", ""},
                                   {"cgroup.type", "domain\n"}});
  AppCgroups cg = AppCgroups::probe(host("0::/box\n", kV2Mount), "a");
  EXPECT_EQ(cg.version(), AppCgroups::Version::kNone);
  EXPECT_NE(cg.problem().find("the memory controller is not available in " + dir_.path() +
                              "/sys/fs/cgroup/box (its cgroup.controllers lists: cpu pids)"),
            std::string::npos)
      << cg.problem();
  EXPECT_NE(cg.problem().find("cgroup v1: no v1 memory hierarchy is mounted"), std::string::npos)
      << cg.problem();
}

TEST_F(AppCgroupsTest, V2RootCgroupKeepsItsProcesses) {
  cgroupDir("/sys/fs/cgroup", {{"cgroup.controllers", "memory\n"},
                               {"cgroup.subtree_control", ""},
                               {"cgroup.procs", "1\n"}});
  AppCgroups cg = AppCgroups::probe(host("0::/\n", kV2Mount), "a");
  ASSERT_EQ(cg.version(), AppCgroups::Version::kV2) << cg.problem();
  ASSERT_TRUE(cg.setUp().ok());
  EXPECT_FALSE(exists("/sys/fs/cgroup/supervisor"));
  EXPECT_EQ(cg.pathOf("x", 2), dir_.path() + "/sys/fs/cgroup/a/x/2");
}

TEST_F(AppCgroupsTest, HybridHostFallsBackToTheV1MemoryHierarchy) {
  // As on this project's CI: cgroup2 without the memory controller beside a v1 memory
  // hierarchy, the controller in a cgroup of the latter.
  cgroupDir("/sys/fs/cgroup/unified",
            {{"cgroup.controllers", "hugetlb\n"}, {"cgroup.subtree_control", ""}});
  const std::string b = "/sys/fs/cgroup/memory/jobs/42";
  cgroupDir(b, {{"memory.limit_in_bytes", "9223372036854771712\n"}, {"cgroup.procs", ""}});
  std::string self = "5:cpu,cpuacct:/\n4:memory:/jobs/42\n0::/\n";
  AppCgroups cg = AppCgroups::probe(host(self, kHybridMounts), "scalws-apps-1");
  ASSERT_EQ(cg.version(), AppCgroups::Version::kV1) << cg.problem();
  EXPECT_EQ(cg.describe(), "cgroup v1 memory " + dir_.path() + b);
  std::string path = cg.pathOf("py", 0);
  EXPECT_EQ(path, dir_.path() + b + "/scalws-apps-1/py/0");

  // Swap accounted (memsw): both limits; a lower limit first, as memsw must stay above.
  cgroupDir(b + "/scalws-apps-1/py/0", {{"memory.memsw.limit_in_bytes", "9223372036854771712\n"}});
  ASSERT_TRUE(cg.prepare("py", 0, 256 << 20).ok());
  EXPECT_EQ(read(b + "/scalws-apps-1/py/0/memory.limit_in_bytes"), std::to_string(256 << 20));
  EXPECT_EQ(read(b + "/scalws-apps-1/py/0/memory.memsw.limit_in_bytes"), std::to_string(256 << 20));
  // Without swap accounting: swappiness 0 instead.
  cgroupDir(b + "/scalws-apps-1/py/1", {{"memory.swappiness", "60\n"}});
  ASSERT_TRUE(cg.prepare("py", 1, 64 << 20).ok());
  EXPECT_EQ(read(b + "/scalws-apps-1/py/1/memory.swappiness"), "0");
  EXPECT_FALSE(exists(b + "/scalws-apps-1/py/1/memory.memsw.limit_in_bytes"));
  // v1 has no subtree_control: nothing is handed down.
  EXPECT_FALSE(exists(b + "/cgroup.subtree_control"));
}

TEST_F(AppCgroupsTest, ReadsEachVersionsFiguresAndOomKills) {
  cgroupDir("/sys/fs/cgroup/memory/j", {{"memory.limit_in_bytes", "9223372036854771712\n"}});
  AppCgroups v1 = AppCgroups::probe(host("4:memory:/j\n", kHybridMounts), "s");
  ASSERT_EQ(v1.version(), AppCgroups::Version::kV1) << v1.problem();
  std::string p1 = "/sys/fs/cgroup/memory/j/s/a/0";
  cgroupDir(p1, {{"memory.usage_in_bytes", "1048576\n"},
                 {"memory.max_usage_in_bytes", "67104768\n"},
                 {"memory.limit_in_bytes", "67108864\n"},
                 {"memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n"},
                 {"memory.stat",
                  "cache 7217152\nworkingset_refault_anon 3\nworkingset_refault_file 500\n"
                  "pgfault 90\npgmajfault 41\ntotal_workingset_refault_file 999\n"
                  "total_pgmajfault 999\n"}});
  std::optional<CgroupUsage> u = v1.usage(dir_.path() + p1);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->refaulted_pages, 503u);  // its own, not its children's totals
  EXPECT_EQ(u->major_faults, 41u);
  EXPECT_EQ(u->current_bytes, 1048576u);
  EXPECT_EQ(u->peak_bytes, 67104768u);
  EXPECT_EQ(u->limit_bytes, 67108864u);
  EXPECT_EQ(u->oom_kills, 2u);
  write(p1 + "/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(v1.usage(dir_.path() + p1)->limit_bytes, 0u);  // "no limit"

  cgroupDir("/sys/fs/cgroup/b", {{"cgroup.controllers", "memory\n"},
                                 {"cgroup.subtree_control", ""},
                                 {"cgroup.type", "domain\n"}});
  AppCgroups v2 = AppCgroups::probe(host("0::/b\n", kV2Mount), "s");
  ASSERT_EQ(v2.version(), AppCgroups::Version::kV2) << v2.problem();
  std::string p2 = "/sys/fs/cgroup/b/s/a/0";
  cgroupDir(p2, {{"memory.current", "4096\n"},
                 {"memory.max", "max\n"},
                 {"memory.events", "low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\noom_group_kill 1\n"},
                 {"memory.stat", "anon 4096\nworkingset_refault 12\npgmajfault 5\n"}});
  u = v2.usage(dir_.path() + p2);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->refaulted_pages, 12u);  // a kernel before 5.9: one refault count
  EXPECT_EQ(u->major_faults, 5u);
  EXPECT_EQ(u->current_bytes, 4096u);
  EXPECT_EQ(u->limit_bytes, 0u);
  EXPECT_EQ(u->peak_bytes, 0u);  // memory.peak is newer than some kernels
  EXPECT_EQ(u->oom_kills, 1u);
  EXPECT_FALSE(v2.usage(dir_.path() + "/sys/fs/cgroup/b/s/a/9"));
}

TEST_F(AppCgroupsTest, TellsWhetherAProcessIsInACgroup) {
  cgroupDir("/sys/fs/cgroup/memory/j", {{"memory.limit_in_bytes", "1\n"}});
  AppCgroups cg = AppCgroups::probe(host("4:memory:/j\n", kHybridMounts), "s");
  ASSERT_TRUE(cg.usable()) << cg.problem();
  cgroupDir("/proc/77", {{"cgroup", "5:cpu,cpuacct:/\n4:memory:/j/s/web/1\n0::/\n"}});
  EXPECT_TRUE(cg.contains(cg.pathOf("web", 1), 77));
  EXPECT_FALSE(cg.contains(cg.pathOf("web", 0), 77));
  EXPECT_FALSE(cg.contains(cg.pathOf("web", 1), 78));  // no such process
}

TEST_F(AppCgroupsTest, RemovesEveryCgroupOfAnApp) {
  cgroupDir("/sys/fs/cgroup/memory/j", {{"memory.limit_in_bytes", "1\n"}});
  AppCgroups cg = AppCgroups::probe(host("4:memory:/j\n", kHybridMounts), "s");
  ASSERT_TRUE(cg.prepare("web", 0, 8 << 20).ok());
  ASSERT_TRUE(cg.prepare("web", 1, 8 << 20).ok());
  ASSERT_TRUE(cg.prepare("other", 0, 8 << 20).ok());
  ASSERT_TRUE(cg.remove("web").ok());
  EXPECT_FALSE(exists("/sys/fs/cgroup/memory/j/s/web"));
  EXPECT_TRUE(exists("/sys/fs/cgroup/memory/j/s/other/0"));
  EXPECT_TRUE(cg.remove("never-added").ok());
  // The subtree goes with the last app, and comes back with the next one.
  ASSERT_TRUE(cg.remove("other").ok());
  EXPECT_FALSE(exists("/sys/fs/cgroup/memory/j/s"));
  ASSERT_TRUE(cg.prepare("web", 0, 8 << 20).ok());
  EXPECT_TRUE(exists("/sys/fs/cgroup/memory/j/s/web/0"));
}

TEST_F(AppCgroupsTest, NothingUsableNamesWhatIsMissingInEach) {
  AppCgroups cg = AppCgroups::probe(host("", ""), "s");
  EXPECT_FALSE(cg.usable());
  EXPECT_EQ(cg.problem(),
            "no memory cgroup the controller can use: cgroup v2: no cgroup2 hierarchy is "
            "mounted; cgroup v1: no v1 memory hierarchy is mounted");
  // The memory hierarchy is mounted but the process is in none of its cgroups.
  cg = AppCgroups::probe(host("0::/\n", kHybridMounts), "s");
  EXPECT_NE(cg.problem().find("cgroup v1: the controller is in no v1 memory cgroup"),
            std::string::npos)
      << cg.problem();
}

TEST_F(AppCgroupsTest, MountPointsWithEscapedCharactersAndNonRootMounts) {
  // A mount of a part of the hierarchy (a container's view): paths are taken below it.
  std::string mounts = "40 30 0:26 /lxc/c1 /sys/fs/cgroup\\040x rw - cgroup2 cgroup2 rw\n";
  cgroupDir("/sys/fs/cgroup x/inner", {{"cgroup.controllers", "memory\n"},
                                       {"cgroup.subtree_control", ""},
                                       {"cgroup.type", "domain\n"}});
  AppCgroups cg = AppCgroups::probe(host("0::/lxc/c1/inner/supervisor\n", mounts), "s");
  ASSERT_EQ(cg.version(), AppCgroups::Version::kV2) << cg.problem();
  EXPECT_EQ(cg.pathOf("a", 0), dir_.path() + "/sys/fs/cgroup x/inner/s/a/0");
  cgroupDir("/proc/5", {{"cgroup", "0::/lxc/c1/inner/s/a/0\n"}});
  EXPECT_TRUE(cg.contains(cg.pathOf("a", 0), 5));
}

}  // namespace
}  // namespace scalws::controller
