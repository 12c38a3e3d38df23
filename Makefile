# tswarp: `make demo` and `make test` set everything up on a fresh Debian/Ubuntu machine.
#   make demo       build deps and the package (CUDA only where a GPU is), 1-NN on GunPoint
#   make test       the test deps, the C tests (ctest) and the Python tests (pytest)
#   make docs       the API reference site (Sphinx + numpydoc) in build/docs/html
#   make typecheck  mypy over the package
#   make bench      CPU benchmark against the peers (bench/cpu_bench.py)
#   make sanitize   C tests under ASan/UBSan and valgrind
#   make figures    the README's images (docs/figures.py)
# TSWARP_CUDA=OFF builds for the CPU only; CUDAARCHS=90-real one GPU target (CI).

SHELL := /bin/bash
.SHELLFLAGS := -o pipefail -c
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BUILD  ?= build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := build-essential cmake ninja-build pkg-config python3 python3-venv python3-dev valgrind
# The demo needs the CUDA backend only where there is a GPU to run it.
DEMO_CUDA := $(shell command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1 && echo AUTO || echo OFF)
PIP_INSTALL = $(PY) -m pip install --no-build-isolation --no-deps -v
# The build's progress (ninja's [k/n] lines) and its errors, not pip's whole log; a failed
# build still fails (pipefail) and its full output is kept in $(BUILD)/pip-install.log.
SHOW_BUILD = tee $(BUILD)/pip-install.log | { grep -E --line-buffered '^ *\[[0-9]+/[0-9]+\]|tswarp: CUDA|rror|Successfully installed' || true; }

.PHONY: all demo test test-c test-python bench sanitize fuzz deps venv venv-dev lib python \
        python-demo docs typecheck figures clean

all: lib python

# System packages, only those missing (apt-get needs root or sudo).
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	for t in cc cmake ninja pkg-config; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ] && ! { command -v cc && command -v cmake && command -v ninja && command -v pkg-config && command -v valgrind && $(PYTHON) -m venv --help; } >/dev/null 2>&1; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

# .venv with what building the package needs (the demo's), then the test tools on top.
$(VENV)/.stamp-build: requirements-build.txt | deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-build.txt
	touch $@

$(VENV)/.stamp-dev: requirements-dev.txt $(VENV)/.stamp-build
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.stamp-build
venv-dev: $(VENV)/.stamp-dev

lib: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

# The package, built with the build's progress shown (ninja's [k/n] lines).
python: venv-dev
	mkdir -p $(BUILD) && $(PIP_INSTALL) . 2>&1 | $(SHOW_BUILD)

python-demo: venv
	mkdir -p $(BUILD) && TSWARP_CUDA=$${TSWARP_CUDA:-$(DEMO_CUDA)} $(PIP_INSTALL) . 2>&1 | $(SHOW_BUILD)

demo: python-demo
	cd /tmp && $(CURDIR)/$(VENV)/bin/tswarp info
	cd /tmp && $(CURDIR)/$(VENV)/bin/tswarp knn --metric all

test-c: lib
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python: python
	$(PY) -m pytest tests/python -q

test: test-c test-python

typecheck: venv-dev
	$(PY) -m mypy

docs: python
	$(PY) -m sphinx -W --keep-going -q -b html docs $(BUILD)/docs/html
	@echo "the API reference: $(BUILD)/docs/html/index.html"

figures: python
	$(PY) docs/figures.py

sanitize: lib
	bash tests/c/sanitize.sh

# libFuzzer harnesses (clang, ASan + UBSan) for FUZZ_SECONDS each over tests/fuzz/corpus
FUZZ_SECONDS ?= 30
fuzz:
	bash tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: python
	$(PY) bench/cpu_bench.py

clean:
	rm -rf $(BUILD) build-* build/py-*
