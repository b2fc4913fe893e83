// What an instance's workers share while it runs: cache areas and log files handed to each
// new worker, the caches' figures kept only when they name the config's caches, and all of
// it dropped when the run ends.
#include "controller/instances/instance_resources.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "controller/instances/instance_config.h"
#include "tests/support/test_files.h"

namespace scalws::controller {
namespace {

namespace fs = std::filesystem;

common::config::SiteConfig siteWith(const std::string& extra) {
  std::string text =
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nproxy = { upstream = \"app\" }\n"
      "[upstream.app]\nservers = [\"127.0.0.1:2\"]\n" +
      extra;
  auto loaded = loadInstanceConfig(text, "/etc/scalws/t.toml");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? *loaded : common::config::SiteConfig();
}

const char* kCaches = "[cache.pages]\nmemory = \"1m\"\n[cache.api]\nmemory = \"2m\"\n";

class InstanceResourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "scalws-resources-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    root_ = pattern;
    ::chmod(root_.c_str(), 0755);
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string root_;
};

TEST_F(InstanceResourcesTest, WithoutALogDirectoryAWorkerGetsOnlyTheAreas) {
  InstanceResources r("", "web");
  common::config::SiteConfig site = siteWith(kCaches);
  ASSERT_TRUE(r.openLogs(site).ok());
  EXPECT_FALSE(r.hasLogs());
  EXPECT_FALSE(static_cast<bool>(r.errorLineSink()));
  EXPECT_FALSE(r.reopenLogs().ok());
  r.begin(InstanceCaches::make(site).value());
  WorkerLaunch launch;
  ASSERT_TRUE(r.handTo(launch).ok());
  EXPECT_EQ(launch.cache_names, (std::vector<std::string>{"pages", "api"}));
  EXPECT_EQ(launch.cache_fds.size(), 2u);
  EXPECT_FALSE(launch.access_log.valid());
}

TEST_F(InstanceResourcesTest, AWorkerGetsTheAccessLogAndWritesErrorsThroughTheSink) {
  InstanceResources r(root_ + "/logs", "web");
  common::config::SiteConfig site = siteWith("");
  ASSERT_TRUE(r.openLogs(site).ok());
  EXPECT_TRUE(r.hasLogs());
  r.begin(InstanceCaches::make(site).value());
  WorkerLaunch launch;
  ASSERT_TRUE(r.handTo(launch).ok());
  EXPECT_TRUE(launch.cache_names.empty());
  ASSERT_TRUE(launch.access_log.valid());
  ASSERT_EQ(::write(launch.access_log.get(), "a\n", 2), 2);
  EXPECT_EQ(testing::readFile(root_ + "/logs/web/access.log"), "a\n");
  std::function<void(const std::string&)> sink = r.errorLineSink();
  ASSERT_TRUE(static_cast<bool>(sink));
  sink("boom");
  EXPECT_EQ(testing::readFile(root_ + "/logs/web/error.log"), "boom\n");
  r.end();
  // Closed with the run: a worker spawned after it gets no access log, and late error
  // lines of the old workers are dropped.
  WorkerLaunch after;
  ASSERT_TRUE(r.handTo(after).ok());
  EXPECT_FALSE(after.access_log.valid());
  sink("late");
  EXPECT_EQ(testing::readFile(root_ + "/logs/web/error.log"), "boom\n");
}

TEST_F(InstanceResourcesTest, AreasAreMadeAnewOnlyWhenNoneAreHeldAndTheSiteNeedsThem) {
  InstanceResources r("", "web");
  ASSERT_TRUE(r.ensureCaches(siteWith("")).ok());
  WorkerLaunch none;
  ASSERT_TRUE(r.handTo(none).ok());
  EXPECT_TRUE(none.cache_fds.empty());
  common::config::SiteConfig cached = siteWith(kCaches);
  EXPECT_FALSE(r.cachesFit(cached));
  ASSERT_TRUE(r.ensureCaches(cached).ok());
  EXPECT_TRUE(r.cachesFit(cached));
  WorkerLaunch first;
  WorkerLaunch second;
  ASSERT_TRUE(r.handTo(first).ok());
  ASSERT_TRUE(r.ensureCaches(cached).ok());  // held already: kept, not replaced
  ASSERT_TRUE(r.handTo(second).ok());
  ASSERT_EQ(first.cache_fds.size(), 2u);
  ASSERT_EQ(second.cache_fds.size(), 2u);
  struct stat a {};
  struct stat b {};
  ASSERT_EQ(::fstat(first.cache_fds[0].get(), &a), 0);
  ASSERT_EQ(::fstat(second.cache_fds[0].get(), &b), 0);
  EXPECT_EQ(a.st_ino, b.st_ino);
  r.end();
  WorkerLaunch ended;
  ASSERT_TRUE(r.handTo(ended).ok());
  EXPECT_TRUE(ended.cache_fds.empty());
}

TEST_F(InstanceResourcesTest, FiguresAreKeptOnlyWhenTheyNameTheConfigsCachesInOrder) {
  InstanceResources r("", "web");
  common::config::SiteConfig site = siteWith(kCaches);
  r.takeFigures({{"pages", 1, 10, 0}, {"api", 2, 20, 0}}, site);
  ASSERT_EQ(r.cacheFigures().size(), 2u);
  EXPECT_EQ(r.cacheFigures()[1].entries, 2u);
  r.takeFigures({{"api", 5, 0, 0}, {"pages", 6, 0, 0}}, site);  // out of order
  r.takeFigures({{"pages", 7, 0, 0}}, site);                    // one missing
  r.takeFigures({{"pages", 1, 0, 0}, {"extra", 1, 0, 0}}, site);
  r.takeFigures({}, site);
  ASSERT_EQ(r.cacheFigures().size(), 2u);
  EXPECT_EQ(r.cacheFigures()[0].entries, 1u);
  r.begin(InstanceCaches::make(site).value());
  EXPECT_TRUE(r.cacheFigures().empty());
  r.takeFigures({{"pages", 3, 0, 0}, {"api", 4, 0, 0}}, site);
  EXPECT_EQ(r.cacheFigures().size(), 2u);
  r.end();
  EXPECT_TRUE(r.cacheFigures().empty());
}

}  // namespace
}  // namespace scalws::controller
