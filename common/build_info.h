// What a binary knows about its own build, for `--version`: the release, the commit it was
// built from and how (build type, compiler, profile-guided optimisation, LTO, sanitizers,
// metrics, HTTP/3). The definitions are generated into the build directory (cmake/build_info.cmake)
// and live in the library scalws_build_info, which only the binaries link.
#pragma once

namespace scalws::common::build_info {

// "0.1.0": the project's version (the top CMakeLists.txt, and debian/changelog with it).
const char* version();
// Twelve hex digits of the commit, "-dirty" appended when tracked files had changes;
// "unknown" outside a git tree; or what -DSCALWS_COMMIT= said.
const char* commit();
// "RelWithDebInfo, GNU 12.2.0; PGO off; LTO off; sanitizers none; metrics on; HTTP/3 on".
const char* flavour();

}  // namespace scalws::common::build_info
