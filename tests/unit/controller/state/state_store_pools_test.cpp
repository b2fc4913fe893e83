#include <gtest/gtest.h>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::StatusCode;

class PoolStoreTest : public StoreTest {};

PoolRecord managedPool(const std::string& name) {
  PoolRecord pool;
  pool.name = name;
  pool.address = "unix:/run/scalws/php/" + name + ".sock";
  pool.managed = true;
  pool.managed_user = "site1";
  pool.processes = 4;
  pool.php_fpm_path = "/usr/sbin/php-fpm8.2";
  return pool;
}

TEST_F(PoolStoreTest, AddsExternalAndManagedPools) {
  StateStore store = open();
  PoolRecord tcp = externalPool("api");
  tcp.address = "tcp:127.0.0.1:9000";
  tcp.max_conns = 0;
  ASSERT_TRUE(store.addPool(tcp).ok());
  Result<PoolRecord> managed = store.addPool(managedPool("shop"));
  ASSERT_TRUE(managed.ok()) << managed.status().message();
  EXPECT_EQ(managed->created_ms, kStartMs);

  Result<std::vector<PoolRecord>> pools = store.listPools();
  ASSERT_TRUE(pools.ok());
  ASSERT_EQ(pools->size(), 2u);
  EXPECT_EQ((*pools)[0].name, "api");
  EXPECT_EQ((*pools)[0].address, "tcp:127.0.0.1:9000");
  EXPECT_FALSE((*pools)[0].managed);
  EXPECT_EQ((*pools)[1].name, "shop");
  EXPECT_TRUE((*pools)[1].managed);
  EXPECT_EQ((*pools)[1].managed_user, "site1");
  EXPECT_EQ((*pools)[1].processes, 4u);
  EXPECT_EQ((*pools)[1].php_fpm_path, "/usr/sbin/php-fpm8.2");
  EXPECT_EQ((*pools)[1].instance, std::nullopt);

  Result<std::vector<EventRecord>> events = store.recentEvents(std::nullopt, 10);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].kind, kEventPoolAdded);
  EXPECT_NE((*events)[0].message.find("managed, 4 process(es) as site1"), std::string::npos);
}

TEST_F(PoolStoreTest, BadPoolsAreRefused) {
  StateStore store = open();
  struct Case {
    PoolRecord pool;
    std::string_view mentions;
  };
  std::vector<Case> cases;
  auto with = [&](std::string_view mentions, auto change) {
    PoolRecord p = externalPool("p");
    change(p);
    cases.push_back({p, mentions});
  };
  with("bad pool name", [](PoolRecord& p) { p.name = "no spaces"; });
  with("unix socket path is absolute", [](PoolRecord& p) { p.address = "unix:run/php.sock"; });
  with("use unix:/path or tcp:host:port", [](PoolRecord& p) { p.address = "/run/php.sock"; });
  with("use tcp:host:port", [](PoolRecord& p) { p.address = "tcp:9000"; });
  with("port is a number", [](PoolRecord& p) { p.address = "tcp:localhost:0"; });
  with("port is a number", [](PoolRecord& p) { p.address = "tcp:localhost:65536"; });
  with("port is a number", [](PoolRecord& p) { p.address = "tcp:localhost:"; });
  with("are for managed pools", [](PoolRecord& p) { p.processes = 2; });
  with("are for managed pools", [](PoolRecord& p) { p.managed_user = "x"; });
  with("needs a user", [](PoolRecord& p) {
    p.managed = true;
    p.processes = 1;
  });
  with("at least 1 process", [](PoolRecord& p) {
    p.managed = true;
    p.managed_user = "u";
  });
  for (const Case& c : cases) {
    Result<PoolRecord> r = store.addPool(c.pool);
    ASSERT_FALSE(r.ok()) << c.pool.address;
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find(c.mentions), std::string::npos) << r.status().message();
  }
  PoolRecord v6 = externalPool("v6");
  v6.address = "tcp:[::1]:9000";
  EXPECT_TRUE(store.addPool(v6).ok());
  EXPECT_EQ(count("SELECT count(*) FROM php_pools"), 1);
}

TEST_F(PoolStoreTest, DuplicateAndUnknownInstanceAreRefused) {
  StateStore store = open();
  ASSERT_TRUE(store.addPool(externalPool("main")).ok());
  Result<PoolRecord> dup = store.addPool(externalPool("main"));
  EXPECT_EQ(dup.status().code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(dup.status().message(), "PHP pool 'main' already exists");
  PoolRecord orphan = externalPool("orphan");
  orphan.instance = "ghost";
  EXPECT_EQ(store.addPool(orphan).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(count("SELECT count(*) FROM php_pools"), 1);
}

TEST_F(PoolStoreTest, AddWithAnInstanceAssignsIt) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("web")).ok());
  PoolRecord pool = externalPool("main");
  pool.instance = "web";
  ASSERT_TRUE(store.addPool(pool).ok());
  Result<PoolRecord> got = store.getPool("main");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->instance, "web");
  Result<std::vector<EventRecord>> events = store.recentEvents("web", 1);
  ASSERT_TRUE(events.ok());
  ASSERT_EQ(events->size(), 1u);
  EXPECT_EQ((*events)[0].kind, kEventPoolAssigned);
}

TEST_F(PoolStoreTest, AssignReleaseAndTheRulesBetween) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("a")).ok());
  ASSERT_TRUE(store.addInstance(instance("b")).ok());
  ASSERT_TRUE(store.addPool(externalPool("main")).ok());

  EXPECT_EQ(store.assignPool("nope", "a").code(), StatusCode::kNotFound);
  EXPECT_EQ(store.assignPool("main", "ghost").code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.assignPool("main", "a").ok());
  ASSERT_TRUE(store.assignPool("main", "a").ok());  // already so: fine, no new event
  common::Status steal = store.assignPool("main", "b");
  EXPECT_EQ(steal.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(steal.message().find("assigned to instance 'a'"), std::string::npos) << steal.message();
  Result<PoolRecord> got = store.getPool("main");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->instance, "a");

  common::Status removal = store.removePool("main");
  EXPECT_EQ(removal.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(removal.message().find("release it first"), std::string::npos);

  ASSERT_TRUE(store.releasePool("main").ok());
  ASSERT_TRUE(store.releasePool("main").ok());  // already released
  EXPECT_EQ(store.releasePool("nope").code(), StatusCode::kNotFound);
  ASSERT_TRUE(store.assignPool("main", "b").ok());
  got = store.getPool("main");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(got->instance, "b");
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'pool.assigned'"), 2);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'pool.released'"), 1);

  ASSERT_TRUE(store.releasePool("main").ok());
  ASSERT_TRUE(store.removePool("main").ok());
  EXPECT_EQ(store.getPool("main").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(store.removePool("main").code(), StatusCode::kNotFound);
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'pool.removed'"), 1);
}

TEST_F(PoolStoreTest, AssignAsBindsARouteNameAndReplacesItsHolder) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("shop", 1, true)).ok());
  ASSERT_TRUE(store.addInstance(instance("blog", 1, true)).ok());
  for (const char* name : {"fpm-a", "fpm-b", "admin"}) {
    ASSERT_TRUE(store.addPool(externalPool(name)).ok());
  }
  std::optional<std::string> replaced = "stale";
  ASSERT_TRUE(store.assignPool("fpm-a", "shop", "main", &replaced).ok());
  EXPECT_EQ(replaced, std::nullopt);
  EXPECT_EQ(store.getPool("fpm-a")->assigned_as, "main");
  ASSERT_TRUE(store.assignPool("admin", "shop").ok());  // under its own name
  EXPECT_EQ(store.getPool("admin")->assigned_as, "admin");

  // The name moves to another pool in one step; the one that had it is released.
  ASSERT_TRUE(store.assignPool("fpm-b", "shop", "main", &replaced).ok());
  EXPECT_EQ(replaced, "fpm-a");
  EXPECT_EQ(store.getPool("fpm-a")->instance, std::nullopt);
  EXPECT_EQ(store.getPool("fpm-a")->assigned_as, "");
  EXPECT_EQ(store.getPool("fpm-b")->instance, "shop");
  EXPECT_EQ(store.getPool("admin")->instance, "shop");  // other names are untouched
  EXPECT_EQ(count("SELECT count(*) FROM events WHERE kind = 'pool.released' AND message = "
                  "'pool fpm-a released (replaced by fpm-b as main)'"),
            1);
  ASSERT_TRUE(store.assignPool("fpm-b", "shop", "main", &replaced).ok());  // already so
  EXPECT_EQ(replaced, std::nullopt);

  // The same name on another instance is another binding.
  ASSERT_TRUE(store.assignPool("fpm-a", "blog", "main").ok());
  // A pool renamed within its instance keeps it.
  ASSERT_TRUE(store.assignPool("admin", "shop", "backoffice").ok());
  EXPECT_EQ(store.getPool("admin")->assigned_as, "backoffice");
  EXPECT_EQ(store.assignPool("admin", "shop", "../x").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(store.getPool("admin")->assigned_as, "backoffice");

  // Removing the instance releases its pools and forgets the names.
  ASSERT_TRUE(store.removeInstance("shop").ok());
  EXPECT_EQ(store.getPool("fpm-b")->instance, std::nullopt);
  EXPECT_EQ(store.getPool("fpm-b")->assigned_as, "");
  ASSERT_TRUE(store.addInstance(instance("shop", 1, true)).ok());
  ASSERT_TRUE(store.assignPool("fpm-b", "shop", "backoffice").ok());
  EXPECT_EQ(store.getPool("fpm-b")->assigned_as, "backoffice");
}

TEST_F(PoolStoreTest, TheDbAllowsOneBindingPerNameAndInstance) {
  StateStore store = open();
  ASSERT_TRUE(store.addInstance(instance("shop")).ok());
  PoolRecord a = externalPool("a");
  a.instance = "shop";
  a.assigned_as = "main";
  ASSERT_TRUE(store.addPool(a).ok());
  PoolRecord b = externalPool("b");
  b.instance = "shop";
  b.assigned_as = "main";
  EXPECT_EQ(store.addPool(b).status().code(), StatusCode::kAlreadyExists);
  // Even a writer that skips the store's checks cannot bind a name twice.
  common::Status direct = store.dbForTest().exec(
      "INSERT INTO php_pools (name, address, max_conns, managed, managed_user, processes, "
      "php_fpm_path, instance, created_ms, updated_ms, assigned_as) VALUES "
      "('c', 'unix:/c', 0, 0, '', 0, '', 'shop', 1, 1, 'main')");
  EXPECT_FALSE(direct.ok());
}

}  // namespace
}  // namespace scalws::controller::state
