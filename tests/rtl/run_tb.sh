#!/bin/sh
# Compile one test bench with every RTL file and the shared bench models (tests/rtl/model/) under
# Icarus and run it at array size N. The ISA dir holds the generated tpu_isa.vh; rtl/ the headers
# of functions a module includes (tpu_fp.vh).
# usage: run_tb.sh <repo root> <work dir> <tb name> <N> <ISA dir>
set -eu
root=$1 work=$2 tb=$3 n=$4 isa=$5
mkdir -p "$work"
out="$work/$tb.n$n.vvp"
iverilog -g2012 -Wall -Wno-timescale -I "$isa" -I "$root/rtl" -I "$root/tests/rtl" -o "$out" \
    -s "$tb" -P "$tb.N=$n" "$root"/rtl/*.v "$root"/tests/rtl/model/*.v "$root/tests/rtl/$tb.v"
exec vvp -n "$out"
