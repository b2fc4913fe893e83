// The shared addresses in human form: for `status` every address the controller runs
// fronts for, for `instance show` those the instance claims names on — each with its fronts,
// its figures, and who answers which name there.
#pragma once

#include <string>

#include "ipc/message.h"

namespace scalws::ctl {

// A SHARED list (control_handlers.h); "" when empty.
std::string renderSharedAddresses(const ipc::Json& list);
// instance metrics' `shared`: a line per address with the connections handed to it.
std::string renderSharedHandoffs(const ipc::Json& list);

}  // namespace scalws::ctl
