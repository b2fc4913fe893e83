// scalwsctl's output for people: the text for each op's result, chosen from a table of
// renderers (ctl_instance_output.h, ctl_pool_output.h, ctl_metrics_output.h). Pure: a
// result in, text out; `--json` bypasses it and prints the result as it came.
#pragma once

#include <string>
#include <string_view>

#include "ipc/message.h"

namespace scalws::ctl {

// The text for the result of `op` (as named in the op table), ending in a newline.
std::string renderResult(std::string_view op, const ipc::Json& result);

}  // namespace scalws::ctl
