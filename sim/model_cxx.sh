#!/bin/sh
# The compiler launcher of the verilated models (tpu_model_library in sim/CMakeLists.txt):
#   model_cxx.sh <model compiler> <project compiler> <arguments...>
# runs the compile command with the model compiler in place of the project's.
cxx=$1
shift 2
exec "$cxx" "$@"
