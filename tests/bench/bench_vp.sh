#!/bin/sh
# The SystemC platform's overhead (make bench): wall time of the MNIST MLP on DIGITS digits through
# tpu_vp (tools/tpu_vp, default quantum, the module's own clock) against `tpusim run` on the same
# package and digits, the median of 3 runs each, with both runs' cycles per batch (equal: the
# platform counts the C path's cycles; tests/vp checks it).
# usage: tests/bench/bench_vp.sh BUILD [ARRAY [DIGITS]]
set -eu
build=$1
array=${2:-16}
digits=${3:-1000}
root=$(cd "$(dirname "$0")/../.." && pwd)
mnist=$root/models/mnist
work=$build/bench-vp
mkdir -p "$work"
"$build/bin/tpuc" "$mnist/mlp.hlo" --weights "$mnist/mlp.safetensors" \
    --calibrate "$mnist/calib.npy" --array "$array" -o "$work/mnist.tpub" >/dev/null
digits_args="--input $mnist/test_x_u8.npy --input-divide 255 --limit $digits"
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1

# Seconds one command takes (its report in $work/report.txt).
seconds() {
    t0=$(date +%s.%N)
    "$@" >"$work/report.txt"
    t1=$(date +%s.%N)
    awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }'
}
median() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

c1=$(seconds "$build/bin/tpusim" run "$work/mnist.tpub" $digits_args)
c_cycles=$(grep 'cycles per batch' "$work/report.txt" | tr -s ' ' | cut -d' ' -f4)
v1=$(seconds "$build/bin/tpu_vp" --package "$work/mnist.tpub" $digits_args)
v_cycles=$(grep 'cycles per batch' "$work/report.txt" | tr -s ' ' | cut -d' ' -f4)
c2=$(seconds "$build/bin/tpusim" run "$work/mnist.tpub" $digits_args)
v2=$(seconds "$build/bin/tpu_vp" --package "$work/mnist.tpub" $digits_args)
c3=$(seconds "$build/bin/tpusim" run "$work/mnist.tpub" $digits_args)
v3=$(seconds "$build/bin/tpu_vp" --package "$work/mnist.tpub" $digits_args)
c=$(median "$c1" "$c2" "$c3")
v=$(median "$v1" "$v2" "$v3")
printf 'SystemC platform overhead: MNIST MLP, %s digits, N = %s (median of 3 runs)\n' \
    "$digits" "$array"
printf '  tpusim run   %7.3f s   cycles per batch %s\n' "$c" "$c_cycles"
printf '  tpu_vp       %7.3f s   cycles per batch %s\n' "$v" "$v_cycles"
awk -v v="$v" -v c="$c" 'BEGIN { printf "  tpu_vp / tpusim run: %.2fx (target: within 1.3x)\n", v / c }'
