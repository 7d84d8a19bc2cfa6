#!/usr/bin/env bash
# The functions whose source asks for prefetches have them in the binary as shipped. GCC 12
# drops every call to a helper left out of line whose only effect is a prefetch (it takes it for
# one without effects): the rigid rows' manifolds went unfetched that way, silently, for sessions.
# A function's code may be spread over its own symbol, its lambdas and the thread pool's
# templates it is inlined into: the prefetches of every code symbol naming it are counted.
# usage: prefetches.sh BINARY 'DEMANGLED NAME PREFIX'...
set -euo pipefail
binary=$1
shift
status=0
symbols=$(nm -C -S --defined-only "$binary")
for name in "$@"; do
  rows=$(awk -v n="$name" 'index($0, n) && $3 ~ /^[tT]$/ {print $1, $2}' <<<"$symbols")
  if [ -z "$rows" ]; then
    echo "FAIL: no function named '$name' in $binary"
    status=1
    continue
  fi
  total=0
  copies=0
  while read -r address size; do
    start=$((16#$address))
    count=$(objdump -d --no-show-raw-insn --start-address=$start \
              --stop-address=$((start + 16#$size)) "$binary" | grep -c 'prefetch' || true)
    total=$((total + count))
    copies=$((copies + 1))
  done <<<"$rows"
  if [ "$total" -eq 0 ]; then
    echo "FAIL: '$name' ($copies code symbols) has no prefetch instruction"
    status=1
  else
    echo "'$name': $total prefetch instructions in $copies code symbols"
  fi
done
exit $status
