#include "controller/ctl/ctl_output.h"

#include "controller/ctl/ctl_app_output.h"
#include "controller/ctl/ctl_cache_output.h"
#include "controller/ctl/ctl_format.h"
#include "controller/ctl/ctl_instance_output.h"
#include "controller/ctl/ctl_metrics_output.h"
#include "controller/ctl/ctl_pool_output.h"
#include "controller/ctl/ctl_shared_output.h"
#include "ipc/ops.h"

namespace scalws::ctl {

using ipc::Json;

namespace {

std::string renderStatus(const Json& r) {
  std::string out = renderControllerStatus(r);
  std::string lines = renderStatusLines(array(r, "instance_metrics"));
  if (!lines.empty()) out += "\n" + lines;
  out += renderSharedAddresses(array(r, "shared_addresses"));
  return out;
}

std::string removed(const Json&) {
  return "removed\n";
}

std::string renderReopenedLogs(const Json& r) {
  std::string names;
  if (r.contains("instances") && r["instances"].is_array()) {
    for (const Json& n : r["instances"]) {
      if (n.is_string()) names += (names.empty() ? "" : ", ") + n.get<std::string>();
    }
  }
  return names.empty() ? "no instance is running\n" : "logs reopened: " + names + "\n";
}

struct Renderer {
  std::string_view op;
  std::string (*render)(const Json& result);
};

// Ops not listed answer an instance summary (start, stop, ...) or nothing to say.
constexpr Renderer kRenderers[] = {
    {ipc::op::kStatus, renderStatus},
    {ipc::op::kCpuList, renderCpus},
    {ipc::op::kInstanceList, renderInstanceList},
    {ipc::op::kInstanceShow, renderInstanceShow},
    {ipc::op::kInstanceLogs, renderEvents},
    {ipc::op::kInstanceMetrics, renderInstanceMetrics},
    {ipc::op::kInstanceRemove, removed},
    {ipc::op::kInstanceCacheShow, renderCacheShow},
    {ipc::op::kInstanceCachePurge, renderCachePurge},
    {ipc::op::kInstanceReopenLogs, renderReopenedLogs},
    {ipc::op::kPoolRemove, removed},
    {ipc::op::kPoolList, renderPools},
    {ipc::op::kPoolAssign, renderAssigned},
    {ipc::op::kPoolShow, renderPool},
    {ipc::op::kPoolAdd, renderPool},
    {ipc::op::kPoolRelease, renderPool},
    {ipc::op::kAppList, renderApps},
    {ipc::op::kAppShow, renderApp},
    {ipc::op::kAppAdd, renderApp},
    {ipc::op::kAppRestart, renderApp},
    {ipc::op::kAppAssign, renderApp},
    {ipc::op::kAppRelease, renderApp},
    {ipc::op::kAppRemove, removed},
    {ipc::op::kAppLogs, renderAppLogs},
};

}  // namespace

std::string renderResult(std::string_view op, const Json& result) {
  for (const Renderer& r : kRenderers) {
    if (r.op == op) return r.render(result);
  }
  if (result.is_object() && result.contains("name")) return renderInstanceLine(result);
  return "done\n";
}

}  // namespace scalws::ctl
