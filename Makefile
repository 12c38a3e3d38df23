# tswarp: `make demo` and `make test` set everything up on a fresh Debian/Ubuntu machine.
#   make demo   install what is needed, build, 1-NN on the shipped GunPoint with DTW, TWED, Soft-DTW
#   make test   install, build, run the C tests (ctest) and the Python tests (pytest)
#   make bench  CPU benchmark against the peers (bench/cpu_bench.py)
#   make sanitize  C tests under ASan/UBSan and valgrind

PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
BUILD  ?= build
JOBS   ?= $(shell nproc 2>/dev/null || echo 2)
SUDO   := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT_PACKAGES := build-essential cmake ninja-build pkg-config python3 python3-venv python3-dev valgrind

.PHONY: all demo test test-c test-python bench sanitize deps venv lib python clean

all: lib python

# System packages, only those missing (apt-get needs root or sudo).
deps:
	@missing=""; for p in $(APT_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	for t in cc cmake ninja pkg-config; do command -v $$t >/dev/null 2>&1 || missing="$$missing $$t"; done; \
	if [ -n "$$missing" ] && ! { command -v cc && command -v cmake && command -v ninja && command -v pkg-config && command -v valgrind && $(PYTHON) -m venv --help; } >/dev/null 2>&1; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq $(APT_PACKAGES); \
	fi

$(VENV)/.stamp: requirements-dev.txt | deps
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.stamp

lib: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

python: venv
	$(PY) -m pip install -q --no-build-isolation --no-deps .

demo: python
	cd /tmp && $(CURDIR)/$(VENV)/bin/tswarp info
	cd /tmp && $(CURDIR)/$(VENV)/bin/tswarp knn --metric all

test-c: lib
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python: python
	$(PY) -m pytest tests/python -q

test: test-c test-python

sanitize: lib
	bash tests/c/sanitize.sh

bench: python
	$(PY) bench/cpu_bench.py

clean:
	rm -rf $(BUILD) build-* build/py-*
