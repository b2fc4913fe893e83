// scalwsd: parses nothing itself; the worker library owns the command line.
#include "worker/cli/scalwsd_main.h"

int main(int argc, char** argv) {
  return scalws::worker::scalwsdMain(argc, argv);
}
