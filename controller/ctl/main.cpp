// scalwsctl: forwards argv and $SCALWS_SOCKET to scalwsctlMain.
#include <cstdlib>
#include <string>
#include <vector>

#include "controller/ctl/scalwsctl_main.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return scalws::ctl::scalwsctlMain(args, std::getenv("SCALWS_SOCKET"));
}
