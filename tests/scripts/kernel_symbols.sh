#!/usr/bin/env bash
# Each kernel path's object (core/solver/KernelSweeps.cpp compiled for one instruction set) may
# define no symbol the linker could merge with another object's: a weak or unique symbol outside
# pbd::kernels::<path>:: (an inline function or template instantiated there too) could be picked
# for the whole program, and AVX-512 code would then run on a CPU without it. Nor may it have a
# static initialiser.
# usage: kernel_symbols.sh PATH=OBJECT...
set -euo pipefail
status=0
for arg in "$@"; do
  path=${arg%%=*}
  object=${arg#*=}
  defined=$(nm -C --defined-only "$object")
  if [ -z "$defined" ]; then
    echo "FAIL: $object defines nothing"
    status=1
    continue
  fi
  # Weak (W, V), unique (u) and indirect (i) symbols must be the path's own.
  stray=$(awk '$2 ~ /^[WVui]$/' <<<"$defined" | grep -v " pbd::kernels::${path}::" || true)
  if [ -n "$stray" ]; then
    echo "FAIL: $path's object defines shared symbols outside pbd::kernels::$path:"
    echo "$stray" | head -20
    status=1
  fi
  # A static initialiser would run when the program starts, on every CPU, compiled for this
  # path's instruction set.
  if objdump -h "$object" | grep -qE '\.(init_array|ctors)'; then
    echo "FAIL: $path's object has a static initialiser (.init_array): it would run on any CPU"
    status=1
  fi
  if ! grep -q " pbd::kernels::${path}::path$" <<<"$defined"; then
    echo "FAIL: $path's object lacks pbd::kernels::$path::path"
    status=1
  fi
  echo "$path: $(awk '$2 ~ /^[WVui]$/' <<<"$defined" | wc -l) weak symbols, all its own"
done
exit $status
