#!/bin/sh
# Builds the Debian package: build/deb/scalws_<version>_<arch>.deb, its -dbgsym package
# and the .changes, then runs lintian on them (any error or warning fails the build).
#
# dpkg-buildpackage writes beside the source tree and leaves files inside it, so it runs on
# a copy in build/deb/src: the tracked and new files as they are now (uncommitted changes
# included), with the commit passed along for `scalwsd --version`.
#
# The package is profile-guided (debian/rules trains scalwsd with bench/ for a few
# minutes); DEB_BUILD_PROFILES=nopgo builds it plain, as CI does.
set -eu
cd "$(dirname "$0")/.."
out=$PWD/build/deb
src=$out/src
rm -rf "$src" "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null | tar -xf - -C "$src"
commit=$(git rev-parse --short=12 HEAD)
if [ -n "$(git status --porcelain --untracked-files=no)" ]; then
  commit="$commit-dirty"
fi
# -b: binary packages only; -us -uc: unsigned.
(cd "$src" && SCALWS_COMMIT=$commit dpkg-buildpackage -b -us -uc)
changes=$(ls "$out"/scalws_*.changes)
echo "build-deb: built:"
ls -1 "$out"/*.deb
lintian --fail-on error,warning --info "$changes"
echo "build-deb: lintian: no errors or warnings"
