#!/bin/sh
# make fuzz: runs every libFuzzer target of build-fuzz for SECONDS each (one after the other, or
# only the targets named), growing its corpus under the build tree. A crash reproducer goes to
# tests/fuzz/crashes/<target>/, where the ctest fuzz.<target>.crashes replays it from then on.
# Prints the executions and crashes of each target.
# usage: tests/fuzz/run.sh BUILD_DIR SECONDS [TARGET ...]
set -u
build=$1 seconds=$2
shift 2
src=$(cd "$(dirname "$0")" && pwd)
list=$build/tests/fuzz/fuzzers.txt
[ -f "$list" ] || { echo "run.sh: no $list (configure with -DTPU_FUZZ=ON)" >&2; exit 2; }
status=0
while IFS='|' read -r name bin dict seeds; do
    [ -n "$name" ] || continue
    if [ $# -gt 0 ]; then
        case " $* " in *" $name "*) ;; *) continue ;; esac
    fi
    corpus=$build/tests/fuzz/corpus/$name
    crashes=$src/crashes/$name
    mkdir -p "$corpus" "$crashes"
    log=$build/tests/fuzz/$name.log
    before=$(ls "$crashes" | wc -l)
    # shellcheck disable=SC2086 # dict and seeds are word lists
    "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$crashes/" $dict "$corpus" $seeds > "$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    new=$(( $(ls "$crashes" | wc -l) - before ))
    printf '%-18s %12s executions  %d crashes  (%s s; log %s)\n' "$name" "${runs:-?}" "$new" \
        "$seconds" "$log"
    [ "$rc" -eq 0 ] && [ "$new" -eq 0 ] || status=1
done < "$list"
exit $status
