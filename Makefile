# Darkroom: `make run` and `make test` install what is missing, build, and run.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build needs (C libraries found by pkg-config, and SQLite for GRDB).
DEBS := pkg-config libjpeg62-turbo-dev libpng-dev libexif-dev libsqlite3-dev
# Only the benchmark needs these: vipsthumbnail is its point of comparison.
BENCH_DEBS := libvips-tools
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE_BIN := .build/release/darkroom

.PHONY: deps bench-deps build release run test bench clean

deps:
	@missing=""; for p in $(DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "make deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

bench-deps: deps
	@missing=""; for p in $(BENCH_DEBS); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "make bench-deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release --product darkroom

# Runs the main job on the bundled samples: a spool filled from samples/, drained once into
# a library and an SQLite catalog under ./run/.
run: release
	@rm -rf run && mkdir -p run
	$(RELEASE_BIN) enqueue --quiet $(wildcard samples/*.jpg samples/*.JPG samples/*.png)
	$(RELEASE_BIN) run --once
	@echo
	$(RELEASE_BIN) status

test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

bench: bench-deps
	$(SWIFT) build -c release --product darkroom
	$(SWIFT) build -c release --product darkroom-bench
	.build/release/darkroom-bench all

clean:
	rm -rf .build run out
