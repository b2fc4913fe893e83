#include "controller/instances/instance_caches.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache/shared_area.h"
#include "common/limits/limit_table.h"
#include "controller/instances/instance_config.h"
#include "controller/instances/worker_probe.h"

namespace scalws::controller {
namespace {

common::config::SiteConfig site(const std::string& caches) {
  std::string text =
      "[[listen]]\naddress = \"127.0.0.1:1\"\n[[route]]\nproxy = { upstream = \"app\" }\n"
      "[upstream.app]\nservers = [\"127.0.0.1:2\"]\n" +
      caches;
  auto loaded = loadInstanceConfig(text, "/etc/scalws/t.toml");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  return loaded.ok() ? *loaded : common::config::SiteConfig();
}

const char* kTwo = "[cache.pages]\nmemory = \"1m\"\n[cache.api]\nmemory = \"2m\"\n";

std::vector<ipc::CacheAreaReport> reportsOf(const std::vector<common::UniqueFd>& fds,
                                            const std::vector<std::string>& names) {
  std::vector<ipc::CacheAreaReport> out;
  for (size_t i = 0; i < fds.size(); ++i) out.push_back({names[i], fds[i].get()});
  return out;
}

TEST(InstanceCachesTest, OneAreaPerCacheSizedByItsMemory) {
  auto caches = InstanceCaches::make(site(kTwo));
  ASSERT_TRUE(caches.ok()) << caches.status().message();
  EXPECT_EQ(caches->names(), (std::vector<std::string>{"pages", "api"}));
  auto fds = caches->duplicateFds();
  ASSERT_TRUE(fds.ok());
  ASSERT_EQ(fds->size(), 2u);
  struct stat st;
  ASSERT_EQ(::fstat((*fds)[1].get(), &st), 0);
  EXPECT_EQ(static_cast<uint64_t>(st.st_size), common::cache::layoutFor(2 << 20).total_size);
  // What a worker maps: an initialised area.
  EXPECT_TRUE(common::cache::SharedArea::attach((*fds)[0].get(), 1 << 20).ok());
  EXPECT_TRUE(InstanceCaches::make(site("")).value().empty());
}

TEST(InstanceCachesTest, AReloadKeepsThemOnlyWhenTheStorageIsTheSame) {
  auto caches = InstanceCaches::make(site(kTwo));
  ASSERT_TRUE(caches.ok());
  EXPECT_TRUE(caches->fits(site(kTwo)));
  // A setting applied per request does not matter ...
  EXPECT_TRUE(caches->fits(site(std::string(kTwo) + "lock_timeout = \"1s\"\n")));
  // ... the memory tier's size, the disk tier and the set of caches do.
  EXPECT_FALSE(
      caches->fits(site("[cache.pages]\nmemory = \"4m\"\n[cache.api]\nmemory = \"2m\"\n")));
  EXPECT_FALSE(caches->fits(site(std::string(kTwo) + "disk = \"/var/cache/x\"\n")));
  EXPECT_FALSE(caches->fits(site("[cache.pages]\nmemory = \"1m\"\n")));
}

TEST(InstanceCachesTest, AreasAreTakenBackFromAWorkerOnlyWhenTheyAreWhatTheConfigMakes) {
  common::config::SiteConfig two = site(kTwo);
  auto made = InstanceCaches::make(two);
  ASSERT_TRUE(made.ok());
  auto fds = made->duplicateFds();
  ASSERT_TRUE(fds.ok());
  auto pidfd = openPidfd(::getpid());  // this process plays the worker
  ASSERT_TRUE(pidfd.ok()) << pidfd.status().message();

  auto adopted = InstanceCaches::adoptFrom(pidfd->get(), reportsOf(*fds, {"pages", "api"}), two);
  ASSERT_TRUE(adopted.ok()) << adopted.status().message();
  EXPECT_TRUE(adopted->sameAreas(*made));
  EXPECT_EQ(adopted->names(), made->names());
  // Reported in another order: the config's order all the same.
  std::vector<ipc::CacheAreaReport> swapped = {{"api", (*fds)[1].get()},
                                               {"pages", (*fds)[0].get()}};
  auto reordered = InstanceCaches::adoptFrom(pidfd->get(), swapped, two);
  ASSERT_TRUE(reordered.ok()) << reordered.status().message();
  EXPECT_TRUE(reordered->sameAreas(*made));

  // Another instance's areas are other memfds: not the same.
  auto other = InstanceCaches::make(two);
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->sameAreas(*made));

  // Refused: a name twice or unknown, one missing, the areas swapped (sizes differ), an
  // fd that is no memfd of ours, one that is not there.
  int not_memfd = ::dup(STDERR_FILENO);
  common::UniqueFd plain(::memfd_create("scalws-cache:pages", MFD_CLOEXEC));  // unsized
  const std::vector<std::vector<ipc::CacheAreaReport>> refused = {
      {{"pages", (*fds)[0].get()}, {"pages", (*fds)[0].get()}},
      {{"pages", (*fds)[0].get()}, {"other", (*fds)[1].get()}},
      {{"pages", (*fds)[0].get()}},
      {{"pages", (*fds)[1].get()}, {"api", (*fds)[0].get()}},
      {{"pages", not_memfd}, {"api", (*fds)[1].get()}},
      {{"pages", plain.get()}, {"api", (*fds)[1].get()}},
      {{"pages", 9999}, {"api", (*fds)[1].get()}},
  };
  for (const auto& reports : refused) {
    EXPECT_FALSE(InstanceCaches::adoptFrom(pidfd->get(), reports, two).ok());
  }
  ::close(not_memfd);
}

const char* kLimited = "[site]\nlimit = { rate = \"10r/s\" }\nlimit_table = \"128k\"\n";

TEST(InstanceCachesTest, TheLimitTableGoesLastWithTheAreas) {
  auto made = InstanceCaches::make(site(std::string(kLimited) + kTwo));
  ASSERT_TRUE(made.ok()) << made.status().message();
  EXPECT_FALSE(made->empty());
  EXPECT_EQ(made->names(), (std::vector<std::string>{"pages", "api", "@limits"}));
  auto fds = made->duplicateFds();
  ASSERT_TRUE(fds.ok());
  ASSERT_EQ(fds->size(), 3u);
  // What a worker maps: a table made for this limit_table.
  EXPECT_TRUE(common::limits::LimitTable::attach((*fds)[2].get(), 128 << 10).ok());
  EXPECT_FALSE(common::limits::LimitTable::attach((*fds)[2].get(), 1 << 20).ok());
  // Limits alone: one area, not empty.
  auto alone = InstanceCaches::make(site(kLimited));
  ASSERT_TRUE(alone.ok());
  EXPECT_FALSE(alone->empty());
  EXPECT_EQ(alone->names(), (std::vector<std::string>{"@limits"}));
}

TEST(InstanceCachesTest, AReloadKeepsTheLimitTableOnlyForTheSameSize) {
  auto made = InstanceCaches::make(site(kLimited));
  ASSERT_TRUE(made.ok());
  EXPECT_TRUE(made->fits(site(kLimited)));
  // Other limits in the same table: kept.
  EXPECT_TRUE(made->fits(site("[site]\nlimit = { connections = 3 }\nlimit_table = \"128k\"\n")));
  // Another size, or no limit any more: a restart.
  EXPECT_FALSE(made->fits(site("[site]\nlimit = { rate = \"10r/s\" }\n")));
  EXPECT_FALSE(made->fits(site("")));
  // No table yet and a limit now: a restart too.
  EXPECT_FALSE(InstanceCaches::make(site("")).value().fits(site(kLimited)));
}

TEST(InstanceCachesTest, TheLimitTableIsTakenBackOnlyWhenItIsWhatTheConfigMakes) {
  common::config::SiteConfig limited = site(kLimited);
  auto made = InstanceCaches::make(limited);
  ASSERT_TRUE(made.ok());
  auto fds = made->duplicateFds();
  ASSERT_TRUE(fds.ok());
  auto pidfd = openPidfd(::getpid());
  ASSERT_TRUE(pidfd.ok()) << pidfd.status().message();
  auto adopted = InstanceCaches::adoptFrom(pidfd->get(), {{"@limits", (*fds)[0].get()}}, limited);
  ASSERT_TRUE(adopted.ok()) << adopted.status().message();
  EXPECT_TRUE(adopted->sameAreas(*made));
  EXPECT_FALSE(InstanceCaches::make(limited).value().sameAreas(*made));

  common::UniqueFd foreign(::memfd_create("scalws-limits", MFD_CLOEXEC));  // unsized
  auto bigger = InstanceCaches::make(site("[site]\nlimit = { rate = \"10r/s\" }\n"));
  ASSERT_TRUE(bigger.ok());
  auto big_fds = bigger->duplicateFds();
  ASSERT_TRUE(big_fds.ok());
  const std::vector<std::vector<ipc::CacheAreaReport>> refused = {
      {},                                                            // missing
      {{"@limits", (*fds)[0].get()}, {"@limits", (*fds)[0].get()}},  // twice
      {{"@limits", foreign.get()}},                                  // not sized for it
      {{"@limits", (*big_fds)[0].get()}},                            // another limit_table
      {{"@limits", 9999}},                                           // not there
  };
  for (const auto& reports : refused) {
    EXPECT_FALSE(InstanceCaches::adoptFrom(pidfd->get(), reports, limited).ok());
  }
  // A worker holding a table the config has no use for.
  EXPECT_FALSE(
      InstanceCaches::adoptFrom(pidfd->get(), {{"@limits", (*fds)[0].get()}}, site("")).ok());
}

}  // namespace
}  // namespace scalws::controller
