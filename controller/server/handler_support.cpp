#include "controller/server/handler_support.h"

namespace scalws::controller {

common::Result<AssignArgs> parseAssignArgs(const ipc::Json& args, std::string_view kind) {
  AssignArgs out;
  SCALWS_ASSIGN_OR_RETURN(out.name, ipc::stringField(args, "name"));
  SCALWS_ASSIGN_OR_RETURN(out.instance, ipc::stringField(args, "instance"));
  SCALWS_ASSIGN_OR_RETURN(out.as, ipc::optionalString(args, "as", ""));
  if (args.contains("as")) SCALWS_RETURN_IF_ERROR(state::validateName(kind, out.as));
  return out;
}

}  // namespace scalws::controller
