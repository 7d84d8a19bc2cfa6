#!/usr/bin/env bash
# The functions whose source asks for prefetches have them in the binary as shipped. GCC 12
# drops every call to a helper left out of line whose only effect is a prefetch (it takes it for
# one without effects): the rigid rows' manifolds went unfetched that way, silently, for sessions.
# usage: prefetches.sh BINARY 'DEMANGLED NAME PREFIX'...
set -euo pipefail
binary=$1
shift
status=0
symbols=$(nm -C -S --defined-only "$binary")
for name in "$@"; do
  # Every copy of the function (the baseline one, the AVX2 lambda, .isra/.constprop clones).
  rows=$(awk -v n="$name" 'index($0, n) && $3 ~ /^[tT]$/ {print $1, $2}' <<<"$symbols")
  if [ -z "$rows" ]; then
    echo "FAIL: no function named '$name' in $binary"
    status=1
    continue
  fi
  while read -r address size; do
    start=$((16#$address))
    count=$(objdump -d --no-show-raw-insn --start-address=$start \
              --stop-address=$((start + 16#$size)) "$binary" | grep -c 'prefetch' || true)
    if [ "$count" -eq 0 ]; then
      echo "FAIL: the copy of '$name' at 0x$address has no prefetch instruction"
      status=1
    else
      echo "'$name' at 0x$address: $count prefetch instructions"
    fi
  done <<<"$rows"
done
exit $status
