#include "worker/http/method.h"

namespace scalws::worker {

Method methodFromName(std::string_view name) {
  switch (name.size()) {
    case 3:
      if (name == "GET") return Method::kGet;
      if (name == "PUT") return Method::kPut;
      break;
    case 4:
      if (name == "HEAD") return Method::kHead;
      if (name == "POST") return Method::kPost;
      break;
    case 5:
      if (name == "PATCH") return Method::kPatch;
      if (name == "TRACE") return Method::kTrace;
      break;
    case 6:
      if (name == "DELETE") return Method::kDelete;
      break;
    case 7:
      if (name == "OPTIONS") return Method::kOptions;
      if (name == "CONNECT") return Method::kConnect;
      break;
    default:
      break;
  }
  return Method::kOther;
}

}  // namespace scalws::worker
