#include "controller/state/statement_rows.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tests/support/sqlite_open.h"
#include "tests/unit/controller/temp_dir.h"

namespace scalws::controller::state {
namespace {

using common::Result;
using common::Status;
using common::StatusCode;
using scalws::testing::TempDir;

class StatementRowsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = scalws::testing::openSqliteOk(dir_.file("t.db"));
    ASSERT_TRUE(db_.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)").ok());
  }

  TempDir dir_;
  SqliteDb db_;
};

std::pair<int64_t, std::string> idAndName(const Statement& row) {
  return {row.columnInt(0), row.columnText(1)};
}

TEST_F(StatementRowsTest, QueryBindsEveryArgumentInOrderAndRunStoresIt) {
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (?1, ?2)", int64_t{7}, "seven").ok());
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (?2, ?1)", "three", int64_t{3}).ok());
  Result<std::vector<std::pair<int64_t, std::string>>> rows = readRows(
      db_.query("SELECT id, name FROM t WHERE id >= ?1 ORDER BY id", int64_t{3}), idAndName);
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  ASSERT_EQ(rows->size(), 2u);
  EXPECT_EQ((*rows)[0], std::make_pair(int64_t{3}, std::string("three")));
  EXPECT_EQ((*rows)[1], std::make_pair(int64_t{7}, std::string("seven")));
}

TEST_F(StatementRowsTest, ReadRowsOfAnEmptyResultIsEmpty) {
  Result<std::vector<std::string>> rows =
      readRows(db_.query("SELECT name FROM t"), firstColumnText);
  ASSERT_TRUE(rows.ok());
  EXPECT_TRUE(rows->empty());
}

TEST_F(StatementRowsTest, ReadFirstRowIsNulloptWhenNoRowMatches) {
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (1, 'one')").ok());
  Result<std::optional<std::string>> none =
      readFirstRow(db_.query("SELECT name FROM t WHERE id = ?1", int64_t{2}), firstColumnText);
  ASSERT_TRUE(none.ok());
  EXPECT_FALSE(none->has_value());
  Result<std::optional<std::string>> one =
      readFirstRow(db_.query("SELECT name FROM t WHERE id = ?1", int64_t{1}), firstColumnText);
  ASSERT_TRUE(one.ok());
  EXPECT_EQ(one->value_or(""), "one");
}

TEST_F(StatementRowsTest, ReadFirstRowLeavesTheRestOfAStatementUnread) {
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (1, 'a'), (2, 'b'), (3, 'c')").ok());
  Result<Statement> stmt = db_.query("SELECT name FROM t ORDER BY id");
  ASSERT_TRUE(stmt.ok());
  Result<std::optional<std::string>> first = readFirstRow(*stmt, firstColumnText);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->value_or(""), "a");
  Result<std::vector<std::string>> rest = readRows(*stmt, firstColumnText);
  ASSERT_TRUE(rest.ok());
  EXPECT_EQ(*rest, (std::vector<std::string>{"b", "c"}));
}

TEST_F(StatementRowsTest, AReaderErrorStopsTheReadAndIsReturned) {
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (1, 'ok'), (2, 'bad'), (3, 'ok')").ok());
  int read = 0;
  auto checked = [&read](const Statement& row) -> Result<std::string> {
    ++read;
    if (row.columnText(1) == "bad") return Status(StatusCode::kIoError, "impossible row");
    return row.columnText(1);
  };
  Result<std::vector<std::string>> rows =
      readRows(db_.query("SELECT id, name FROM t ORDER BY id"), checked);
  ASSERT_FALSE(rows.ok());
  EXPECT_EQ(rows.status().code(), StatusCode::kIoError);
  EXPECT_EQ(rows.status().message(), "impossible row");
  EXPECT_EQ(read, 2);
  Result<std::optional<std::string>> first =
      readFirstRow(db_.query("SELECT id, name FROM t WHERE id = 2"), checked);
  EXPECT_EQ(first.status().code(), StatusCode::kIoError);
}

TEST_F(StatementRowsTest, APrepareOrBindFailureIsReturnedAsIs) {
  Result<std::vector<std::string>> bad_sql =
      readRows(db_.query("SELECT nope FROM t"), firstColumnText);
  EXPECT_FALSE(bad_sql.ok());
  Result<std::optional<std::string>> bad_table = readFirstRow(
      db_.query("SELECT name FROM missing WHERE id = ?1", int64_t{1}), firstColumnText);
  EXPECT_FALSE(bad_table.ok());
  // ?2 does not exist in a statement of one parameter.
  EXPECT_FALSE(db_.query("SELECT name FROM t WHERE id = ?1", int64_t{1}, int64_t{2}).ok());
  EXPECT_FALSE(db_.run("INSERT INTO t (id, name) VALUES (?1, ?2)", "not a number", "x").ok());
}

TEST_F(StatementRowsTest, RunReportsAConstraintFailure) {
  ASSERT_TRUE(db_.run("INSERT INTO t (id, name) VALUES (?1, ?2)", int64_t{1}, "a").ok());
  Status again = db_.run("INSERT INTO t (id, name) VALUES (?1, ?2)", int64_t{1}, "b");
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
}

}  // namespace
}  // namespace scalws::controller::state
