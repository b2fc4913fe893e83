// Opening a state database in the controller's state tests. Header-only: scalws_test_support
// does not link scalws_controller, the tests that include this do.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "controller/state/sqlite_db.h"

namespace scalws::testing {

// The database at `path`, failing the test (and returning a closed one) when it does not open.
inline controller::state::SqliteDb openSqliteOk(const std::string& path,
                                                controller::state::SqliteDb::Options options = {}) {
  common::Result<controller::state::SqliteDb> db = controller::state::SqliteDb::open(path, options);
  EXPECT_TRUE(db.ok()) << db.status().message();
  return db.ok() ? std::move(*db) : controller::state::SqliteDb();
}

}  // namespace scalws::testing
