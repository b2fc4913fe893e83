// A state DB made by an older controller (fixtures/state_v4.sql: schema version 4, written
// before the metrics columns were generated from the field list) opens with this binary:
// it migrates forward, keeps every row, and its metrics rows read back figure by figure.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "controller/state/state_store.h"
#include "tests/unit/controller/state/store_fixture.h"

namespace scalws::controller::state {
namespace {

using common::Result;

std::string fixture(const char* name) {
  std::ifstream in(std::string(SCALWS_SOURCE_DIR) + "/tests/unit/controller/state/fixtures/" +
                   name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class SchemaUpgradeTest : public StoreTest {
 protected:
  void SetUp() override {
    std::string dump = fixture("state_v4.sql");
    ASSERT_FALSE(dump.empty());
    Result<SqliteDb> db = SqliteDb::open(dbPath());
    ASSERT_TRUE(db.ok()) << db.status().message();
    ASSERT_TRUE(db->exec(dump).ok());
  }
};

TEST_F(SchemaUpgradeTest, AVersion4DbOpensMigratesAndKeepsItsRows) {
  StateStore store = open();
  Result<InstanceRecord> shop = store.getInstance("shop");
  ASSERT_TRUE(shop.ok()) << shop.status().message();
  EXPECT_EQ(shop->user, "nobody");
  EXPECT_EQ(shop->assigned_cpus, common::CpuSet{0});
  Result<PoolRecord> pool = store.getPool("main");
  ASSERT_TRUE(pool.ok());
  EXPECT_EQ(pool->instance, "shop");
  EXPECT_EQ(count("SELECT count(*) FROM workers"), 1);
  EXPECT_GE(count("SELECT max(version) FROM schema_version"), 4);
}

TEST_F(SchemaUpgradeTest, ItsMetricsRowsReadBackFigureByFigure) {
  StateStore store = open();
  Result<std::vector<MetricsRow>> tens =
      store.listMetrics("shop", MetricsResolution::k10s, 0, INT64_MAX);
  ASSERT_TRUE(tens.ok()) << tens.status().message();
  ASSERT_EQ(tens->size(), 2u);
  // The fixture set column i (0-based, after instance and bucket_ms) to 100 + 2 + i.
  const common::metrics::MetricsSnapshot& f = (*tens)[0].figures;
  EXPECT_EQ(f.requests_by_class[0], 102u);
  EXPECT_EQ(f.requests_by_class[4], 106u);
  EXPECT_EQ(f.requests_by_action[0], 107u);
  EXPECT_EQ(f.requests_by_action[6], 113u);
  EXPECT_EQ(f.bytes_in, 114u);
  EXPECT_EQ(f.conn_active, 118u);
  EXPECT_EQ(f.php_wait_us, 129u);
  EXPECT_EQ(f.latency_sum_us, 132u);
  EXPECT_EQ(f.latency[3], 5u);
  EXPECT_EQ(f.latency[10], 2u);
  int col = 2;
  for (const MetricsColumn& column : metricsColumns()) {
    EXPECT_EQ(column.of(f), 100u + static_cast<uint64_t>(col)) << column.name;
    ++col;
  }
  Result<std::vector<MetricsRow>> minutes =
      store.listMetrics("shop", MetricsResolution::k1m, 0, INT64_MAX);
  ASSERT_TRUE(minutes.ok());
  ASSERT_EQ(minutes->size(), 1u);
  EXPECT_EQ((*minutes)[0].figures.rss_bytes, 1031u);

  // And new rows go in beside them.
  MetricsRow next = (*tens)[1];
  next.bucket_ms += 10'000;
  next.figures.bytes_out = 7;
  ASSERT_TRUE(store.insertMetrics(MetricsResolution::k10s, std::span(&next, 1)).ok());
  EXPECT_EQ(count("SELECT bytes_out FROM metrics_10s WHERE bucket_ms = " +
                  std::to_string(next.bucket_ms)),
            7);
}

TEST_F(SchemaUpgradeTest, TheGeneratedTablesMatchTheOldOnes) {
  // A fresh DB made by this binary has the same metrics columns, in the same order, as
  // the version 4 DB of the fixture.
  auto columns = [](const std::string& path, const char* table) {
    Result<SqliteDb> db = SqliteDb::open(path);
    EXPECT_TRUE(db.ok());
    Result<Statement> stmt =
        db->prepare(std::string("SELECT name, type FROM pragma_table_info('") + table + "')");
    EXPECT_TRUE(stmt.ok());
    std::string out;
    while (*stmt->step()) out += stmt->columnText(0) + " " + stmt->columnText(1) + ",";
    return out;
  };
  StateStore upgraded = open();
  scalws::testing::TempDir other;
  std::string fresh_path = StateStore::dbPath(other.path());
  Result<StateStore> fresh = StateStore::open(fresh_path, cpu::CpuAllocator(common::CpuSet{0}));
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  for (const char* table : {"metrics_10s", "metrics_1m"}) {
    EXPECT_EQ(columns(fresh_path, table), columns(dbPath(), table)) << table;
  }
  EXPECT_NE(columns(fresh_path, "metrics_10s").find("php_wait_us INTEGER"), std::string::npos);
}

}  // namespace
}  // namespace scalws::controller::state
