# tpusim top-level build. CMake (with Verilator's verilate()) does the work underneath.
#   make            build everything into build/
#   make test       run every test (RTL benches, lint, GoogleTest suites) through ctest
#   make lint       verilator --lint-only -Wall on every RTL module
#   make soak       thousands of random programs, RTL against the golden model
#   make ARRAY=8    build only the N = 8 model (any list: ARRAY="8 16")

BUILD  ?= build
ARRAY  ?= 4 8 16 32
JOBS   ?= $(shell nproc)
CMAKE_FLAGS ?=

CMAKE_FLAGS += -DTPU_ARRAYS="$(subst $() ,;,$(strip $(ARRAY)))"

.PHONY: all deps configure build test lint soak clean

all: build

deps:
	@.ci/install-deps

configure: deps
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure

lint: configure
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure -R '^lint\.'

soak: build
	TPU_SOAK_PROGRAMS=2000 $(BUILD)/bin/test_core --gtest_filter='*.RandomPrograms/*'

clean:
	rm -rf $(BUILD)
