// scalwsd's command line (main.cpp only forwards argv here, so tests link the rest).
//
//   scalwsd --config FILE           serve a site standalone
//   scalwsd --check-config FILE     validate; exit 0 valid, 1 invalid (every error printed)
//   scalwsd --instance NAME --ipc-fd N [--attach-fd M]
//                                   a worker of scalws-controller (instance_server.h)
//   scalwsd --version | --help    --version: version, commit and build (common/build_info.h)
// Exit codes: 0 ok, 1 failure (bad config, cannot bind), 2 usage error.
#pragma once

namespace scalws::worker {

int scalwsdMain(int argc, char** argv);

}  // namespace scalws::worker
