// scalws-front: parses nothing itself; the front library owns the command line.
#include "front/front_main.h"

int main(int argc, char** argv) {
  return scalws::front::frontMain(argc, argv);
}
