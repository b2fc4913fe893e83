// scalws-controller: parses argv and runs the Controller (controller/controller.h).
#include <cstdio>
#include <string>
#include <vector>

#include "controller/controller.h"
#include "controller/controller_options.h"

#ifndef SCALWS_VERSION
#define SCALWS_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace scalws::controller;
  std::vector<std::string> args(argv + 1, argv + argc);
  scalws::common::Result<ControllerOptions> options = parseControllerArgs(args);
  if (!options.ok()) {
    std::fprintf(stderr, "scalws-controller: %s\n%s", options.status().message().c_str(),
                 kControllerUsage);
    return 2;
  }
  if (options->help) {
    std::fputs(kControllerUsage, stdout);
    return 0;
  }
  if (options->version) {
    std::printf("scalws-controller %s\n", SCALWS_VERSION);
    return 0;
  }
  return Controller::run(*options);
}
