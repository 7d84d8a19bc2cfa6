#!/usr/bin/env bash
# No Qt 5 library may be loaded by any of our binaries (Debian's VTK Qt module is built for
# Qt 5; linking it would put two Qt versions into one process). GUI binaries must load Qt 6.
set -euo pipefail
status=0
for binary in "$@"; do
  libs=$(ldd "$binary")
  if grep -i 'libQt5' <<<"$libs"; then
    echo "FAIL: $binary loads Qt 5"
    status=1
  fi
  if [ "$(basename "$binary")" != pbdlab-cli ] && ! grep -q 'libQt6Core' <<<"$libs"; then
    echo "FAIL: $binary does not load Qt 6"
    status=1
  fi
done
[ $status -eq 0 ] && echo "$# passed, 0 failed"
exit $status
