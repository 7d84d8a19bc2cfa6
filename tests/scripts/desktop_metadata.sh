#!/usr/bin/env bash
# cmake --install puts the binaries, the .desktop file, the AppStream metainfo and the
# application icon where a desktop finds them, and Debian's validators accept both files.
# Usage: desktop_metadata.sh BUILD_DIR
set -euo pipefail
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$1" --prefix "$prefix" >/dev/null
status=0
for f in bin/pbdlab bin/pbdlab-cli share/applications/pbdlab.desktop \
  share/metainfo/org.pbdlab.pbdlab.metainfo.xml share/icons/hicolor/scalable/apps/pbdlab.svg; do
  if [ ! -e "$prefix/$f" ]; then
    echo "FAIL: cmake --install did not install $f"
    status=1
  fi
done
# desktop-file-validate prints hints it does not fail on: any output at all fails here.
out=$(desktop-file-validate "$prefix/share/applications/pbdlab.desktop" 2>&1) || status=1
if [ -n "$out" ]; then
  echo "FAIL: desktop-file-validate: $out"
  status=1
fi
if ! appstreamcli validate --no-net --pedantic \
  "$prefix/share/metainfo/org.pbdlab.pbdlab.metainfo.xml"; then
  echo "FAIL: appstreamcli validate"
  status=1
fi
[ $status -eq 0 ] && echo "desktop metadata: installed and valid"
exit $status
