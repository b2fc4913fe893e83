// scalws-front's command line (front/main.cpp only calls this):
//   scalws-front --address ADDR --ipc-fd N [--attach-fd M]   run as the controller spawns it
//   scalws-front --sandbox-report [--user USER] [--json]     apply the front's sandbox in a
//                                                            child, print what is in force
//                                                            and what it refused when tried
#pragma once

namespace scalws::front {

int frontMain(int argc, char** argv);

}  // namespace scalws::front
