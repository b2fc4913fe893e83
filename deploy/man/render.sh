#!/bin/sh
# render.sh README PAGE.md OUT VERSION: writes the man page OUT from PAGE.md, whose lines
# "@README Heading@" stand for that "## Heading" section of README.md (up to the next
# "## "), headings lifted one level so the section's "###" become the page's subsections.
# The reference text lives once, in the README; the pages only add NAME and SEE ALSO, so
# the two never disagree. Needs pandoc (Debian's package). Run by the build (cmake/install.cmake).
set -eu
readme=$1
page=$2
out=$3
version=$4
tmp="$out.md.tmp"
awk -v readme="$readme" -v version="$version" '
  function include(title,   line, on, n) {
    on = 0
    n = 0
    while ((getline line < readme) > 0) {
      if (line ~ /^```/) fence = !fence
      if (!fence && line ~ /^## /) {
        if (on) break
        if (substr(line, 4) == title) { on = 1; continue }
      }
      if (!on) continue
      if (!fence && line ~ /^###/) line = substr(line, 2)
      print line
      n++
    }
    close(readme)
    fence = 0
    if (n == 0) { print "render.sh: no section \"## " title "\" in " readme > "/dev/stderr"; exit 1 }
  }
  /^@README .*@$/ { include(substr($0, 9, length($0) - 9)); next }
  { gsub(/@VERSION@/, version); print }
' "$page" >"$tmp"
pandoc --standalone --from markdown-smart --to man "$tmp" -o "$out"
rm -f "$tmp"
