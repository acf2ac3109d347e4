#!/bin/sh
# Compile one test bench with every RTL file and the shared bench models (tests/rtl/model/) under
# Icarus and run it at array size N.
# usage: run_tb.sh <repo root> <work dir> <tb name> <N>
set -eu
root=$1 work=$2 tb=$3 n=$4
mkdir -p "$work"
out="$work/$tb.n$n.vvp"
iverilog -g2012 -Wall -Wno-timescale -o "$out" -s "$tb" -P "$tb.N=$n" "$root"/rtl/*.v \
    "$root"/tests/rtl/model/*.v "$root/tests/rtl/$tb.v"
exec vvp -n "$out"
