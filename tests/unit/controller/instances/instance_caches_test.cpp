#include "controller/instances/instance_caches.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cache/shared_area.h"
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

}  // namespace
}  // namespace scalws::controller
