// The loops every store query runs, written once: step a Statement to its end reading each
// row (readRows), or read at most its first row (readFirstRow).
//   SCALWS_ASSIGN_OR_RETURN(std::vector<AppRecord> apps,
//                           readRows(db.query("SELECT ... WHERE instance = ?1", name), readApp));
//
// `read(const Statement&)` reads the current row and returns a value or a Result of one; a
// failed Result (a row holding an impossible value) stops the read and is returned, as is a
// failed step. The Statement is left wherever the read stopped.
#pragma once

#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/status.h"
#include "controller/state/sqlite_db.h"

namespace scalws::controller::state {

namespace rows_internal {

template <typename T>
struct RowOf {
  using type = T;
};
template <typename T>
struct RowOf<common::Result<T>> {
  using type = T;
};

template <typename Read>
using Row = typename RowOf<std::invoke_result_t<Read&, const Statement&>>::type;

}  // namespace rows_internal

// Every row left in `stmt`, in order.
template <typename Read>
common::Result<std::vector<rows_internal::Row<Read>>> readRows(Statement& stmt, Read read) {
  std::vector<rows_internal::Row<Read>> out;
  while (true) {
    SCALWS_ASSIGN_OR_RETURN(bool more, stmt.step());
    if (!more) return out;
    common::Result<rows_internal::Row<Read>> row = read(std::as_const(stmt));
    if (!row.ok()) return row.status();
    out.push_back(std::move(row).value());
  }
}

// The next row of `stmt`, or nullopt when it has none.
template <typename Read>
common::Result<std::optional<rows_internal::Row<Read>>> readFirstRow(Statement& stmt, Read read) {
  using Row = rows_internal::Row<Read>;
  SCALWS_ASSIGN_OR_RETURN(bool found, stmt.step());
  if (!found) return std::optional<Row>();
  common::Result<Row> row = read(std::as_const(stmt));
  if (!row.ok()) return row.status();
  return std::optional<Row>(std::move(row).value());
}

// The same over a statement just prepared (db.query(...)): its failure is returned as is,
// and the statement is finalised before the caller runs the next one.
template <typename Read>
common::Result<std::vector<rows_internal::Row<Read>>> readRows(common::Result<Statement> stmt,
                                                               Read read) {
  if (!stmt.ok()) return stmt.status();
  return readRows(*stmt, std::move(read));
}
template <typename Read>
common::Result<std::optional<rows_internal::Row<Read>>> readFirstRow(common::Result<Statement> stmt,
                                                                     Read read) {
  if (!stmt.ok()) return stmt.status();
  return readFirstRow(*stmt, std::move(read));
}

// A reader for a query of one text column.
inline std::string firstColumnText(const Statement& stmt) {
  return stmt.columnText(0);
}

}  // namespace scalws::controller::state
