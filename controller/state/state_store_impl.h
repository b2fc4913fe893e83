// What the files of StateStore (state_store*.cpp) share beside its header: the names they
// use and the row readers (statement_rows.h). Included by those files only.
#pragma once

#include "controller/state/state_store.h"
#include "controller/state/statement_rows.h"

namespace scalws::controller::state::store_impl {

using common::Result;
using common::Status;
using common::StatusCode;

}  // namespace scalws::controller::state::store_impl
