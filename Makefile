# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# stkrec build: libbpf-bootstrap style. Quiet unless V=1; all output in build/.

HOST_ARCH := $(shell uname -m | sed 's/x86_64/x86/' | sed 's/aarch64/arm64/')
ARCH ?= $(HOST_ARCH)
# Cross builds (make ARCH=arm64 on x86) use Debian's cross gcc and the
# multiarch libraries (make cross-deps-arm64), and build in build/ARCH.
GNU_TRIPLET_x86 := x86_64-linux-gnu
GNU_TRIPLET_arm64 := aarch64-linux-gnu
ifneq ($(ARCH),$(HOST_ARCH))
CROSS_COMPILE ?= $(GNU_TRIPLET_$(ARCH))-
else
# A CROSS_COMPILE exported for kernel builds must not change a native build.
override CROSS_COMPILE :=
endif
OUT := build$(if $(CROSS_COMPILE),/$(ARCH))
PREFIX ?= /usr/local
VERSION := 0.1.0

ifneq ($(CROSS_COMPILE),)
ifeq ($(origin CC),default)
CC := $(CROSS_COMPILE)gcc
endif
endif
CC ?= cc
CLANG ?= clang
# The workloads' clang: the target's triplet when cross building (the BPF
# object is compiled with -target bpf whatever ARCH is).
CLANG_TARGET := $(if $(CROSS_COMPILE),--target=$(patsubst %-,%,$(CROSS_COMPILE)))
BPFTOOL ?= bpftool
VMLINUX := bpf/$(ARCH)/vmlinux.h

WARN := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Werror
CFLAGS ?= -g -O2
CFLAGS += $(WARN) -std=gnu11 -D_GNU_SOURCE -DSTKREC_VERSION='"$(VERSION)"' \
	  -I. -I$(OUT) -fno-omit-frame-pointer
LDLIBS := -lbpf -ldw -lelf -lzstd -lz -llzma -lpthread
TEST_LDLIBS := -lcriterion

ifeq ($(V),1)
Q =
msg =
else
Q = @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

.DELETE_ON_ERROR:
.PHONY: FORCE all clean deps browser-deps kernel-deps test test-build test-kernels workloads soak fuzz \
	fuzz-build install vmlinux demo bench

UTIL_SRCS := $(wildcard util/*.c)
FORMAT_SRCS := $(wildcard format/*.c)
RECORD_SRCS := $(wildcard record/*.c)
CFI_SRCS := $(wildcard cfi/*.c)
PACK_SRCS := $(wildcard pack/*.c)
SYM_SRCS := $(wildcard sym/*.c)
PYTHON_SRCS := $(wildcard python/*.c)
REPORT_SRCS := $(wildcard report/*.c)
SRC_SRCS := $(filter-out src/main.c,$(wildcard src/*.c))
BPF_SRCS := $(wildcard bpf/*.bpf.c)
TEST_SRCS := $(wildcard tests/test_*.c)
TESTUTIL_SRCS := $(wildcard tests/util_*.c)
WORKLOAD_SRCS := $(wildcard tests/workloads/*.c)
FUZZ_SRCS := $(wildcard tests/fuzz/fuzz_*.c)

SKELS := $(patsubst bpf/%.bpf.c,$(OUT)/%.skel.h,$(BPF_SRCS))
UTIL_OBJS := $(patsubst %.c,$(OUT)/%.o,$(UTIL_SRCS))
FORMAT_OBJS := $(patsubst %.c,$(OUT)/%.o,$(FORMAT_SRCS))
RECORD_OBJS := $(patsubst %.c,$(OUT)/%.o,$(RECORD_SRCS))
CFI_OBJS := $(patsubst %.c,$(OUT)/%.o,$(CFI_SRCS))
PACK_OBJS := $(patsubst %.c,$(OUT)/%.o,$(PACK_SRCS))
SYM_OBJS := $(patsubst %.c,$(OUT)/%.o,$(SYM_SRCS))
PYTHON_OBJS := $(patsubst %.c,$(OUT)/%.o,$(PYTHON_SRCS))
REPORT_OBJS := $(patsubst %.c,$(OUT)/%.o,$(REPORT_SRCS))
SRC_OBJS := $(patsubst %.c,$(OUT)/%.o,$(SRC_SRCS))
TEST_OBJS := $(patsubst %.c,$(OUT)/%.o,$(TEST_SRCS))
TESTUTIL_OBJS := $(patsubst %.c,$(OUT)/%.o,$(TESTUTIL_SRCS))
# nofp_lib*.c are shared libraries (nofp_lib.so), loaded by nofp_dlopen.
NOFP_LIB_SRCS := $(wildcard tests/workloads/nofp_lib*.c)
WORKLOADS := $(patsubst tests/workloads/%.c,$(OUT)/workloads/%,$(filter-out $(NOFP_LIB_SRCS),$(WORKLOAD_SRCS))) \
	$(patsubst tests/workloads/%.c,$(OUT)/workloads/%.so,$(NOFP_LIB_SRCS))
# The Python workloads are copied, not built: $STKREC_WORKLOADS/py/NAME.py.
PY_WORKLOADS := $(patsubst tests/%,$(OUT)/%,$(wildcard tests/workloads/py/*.py))
WORKLOADS += $(PY_WORKLOADS)
FUZZERS := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(FUZZ_SRCS))

LIBUTIL := $(OUT)/libutil.a
LIBFORMAT := $(OUT)/libformat.a
LIBRECORD := $(OUT)/librecord.a
LIBCFI := $(OUT)/libcfi.a
LIBPACK := $(OUT)/libpack.a
LIBSYM := $(OUT)/libsym.a
LIBPYTHON := $(OUT)/libpython.a
LIBREPORT := $(OUT)/libreport.a
LIBSRC := $(OUT)/libsrc.a
# A library before those it uses: record/ uses cfi/, pack/ and python/,
# pack/ uses sym/ (DEVELOPERS.md, Layout).
ALL_LIBS := $(LIBSRC) $(LIBREPORT) $(LIBRECORD) $(LIBCFI) $(LIBPACK) $(LIBPYTHON) $(LIBSYM) \
	    $(LIBFORMAT) $(LIBUTIL)

all: $(OUT)/stkrec

# --- BPF objects and skeletons -------------------------------------------
$(OUT)/%.bpf.o: bpf/%.bpf.c bpf/*.h $(VMLINUX) | $(OUT)
	$(call msg,BPF,$@)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -I. -Ibpf/$(ARCH) \
		-Wall -Werror -c $< -o $@.tmp
	$(Q)$(BPFTOOL) gen object $@ $@.tmp && rm -f $@.tmp

$(OUT)/%.skel.h: $(OUT)/%.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name $(subst -,_,$*)_bpf > $@

vmlinux:
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $(VMLINUX)

# --- user space ----------------------------------------------------------
# Explicit, so make builds the skeletons before any record/ object (cfi/
# and pack/ need none).
$(RECORD_OBJS): $(SKELS)

$(OUT)/%.o: %.c | $(OUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

$(OUT)/lib%.a:
	$(call msg,AR,$@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(LIBUTIL): $(UTIL_OBJS)
$(LIBFORMAT): $(FORMAT_OBJS)
$(LIBRECORD): $(RECORD_OBJS)
$(LIBCFI): $(CFI_OBJS)
$(LIBPACK): $(PACK_OBJS)
$(LIBSYM): $(SYM_OBJS)
$(LIBPYTHON): $(PYTHON_OBJS)
$(LIBREPORT): $(REPORT_OBJS)
$(LIBSRC): $(SRC_OBJS)

# `stkrec --version` names the commit built: $(OUT)/version.h holds `git
# describe` of this tree ("" outside git: a tarball) and is rewritten only
# when that changes, so a new commit (or a tree turning dirty) recompiles
# main.c and relinks, and an unchanged tree rebuilds nothing. Tags are left
# out, so that the commit reads as `git rev-parse --short HEAD`.
$(OUT)/version.h: FORCE | $(OUT)
	$(Q)c=$$([ -e .git ] && git describe --always --dirty --exclude='*' 2>/dev/null); \
	printf '#define STKREC_COMMIT "%s"\n' "$$c" >$@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@ && echo "  GEN      $@ ($$c)"; fi

$(OUT)/src/main.o: $(OUT)/version.h

$(OUT)/stkrec: $(OUT)/src/main.o $(ALL_LIBS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) $^ $(LDLIBS) -o $@
	$(Q)$(if $(CROSS_COMPILE),,ln -sf $(OUT)/stkrec stkrec 2>/dev/null || true)

$(OUT):
	$(Q)mkdir -p $(OUT)

FORCE:

# --- tests -----------------------------------------------------------------
# One Criterion binary runs every tests/test_*.c; build/tests/test_X runs one
# file alone (handy while working on a module).
# clang: GCC 12 drops the frame pointer of leaf functions even with
# -mno-omit-leaf-frame-pointer, and the caller of a leaf then vanishes.
$(OUT)/workloads/%: tests/workloads/%.c Makefile
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(CLANG_TARGET) -g -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline \
		-fno-optimize-sibling-calls \
		-Wl,--build-id -pthread $< -o $@ -lm

# tests/workloads/nofp_*: the same code without frame pointers, for the
# .eh_frame unwinder (record --call-graph dwarf). clang as above (one
# compiler for the cross build too), and not GCC for another reason: its
# -O2 folds identical functions into one (-fipa-icf) and renames what it
# specializes (nofp_ms.constprop.0), which would change the chains that
# the tests expect. -fno-inline and -fno-optimize-sibling-calls keep one
# frame per function; tests/test_record_unwind.c checks (x86-64) that no
# function of the chains sets up %rbp.
NOFP_CFLAGS := -g -O2 -fomit-frame-pointer -fasynchronous-unwind-tables -fno-inline \
	-fno-optimize-sibling-calls -Wall -Wextra -Wno-unused-parameter -Werror -Wl,--build-id -pthread
$(OUT)/workloads/nofp_%: tests/workloads/nofp_%.c tests/workloads/nofp_common.h Makefile
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(CLANG_TARGET) $(NOFP_CFLAGS) $< -o $@ -ldl

$(OUT)/workloads/nofp_%.so: tests/workloads/nofp_%.c tests/workloads/nofp_common.h Makefile
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(CLANG_TARGET) $(NOFP_CFLAGS) -shared -fPIC $< -o $@

$(OUT)/workloads/py/%.py: tests/workloads/py/%.py
	$(call msg,CP,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)cp $< $@

# Test binaries are not PIEs: Criterion's BoxFort maps its arenas in each test's process
# at the runner's addresses, picked at random in [0x2000'0000'0000,
# 0x6000'0000'0000) with MAP_FIXED, over whatever the new process has
# there. A PIE test binary is loaded in that range, and once (2026-12-07)
# an arena landed on its text: the test "crashed during its setup". At
# 0x400000 the binary and its heap are out of the arenas' way.
$(OUT)/stkrec-tests: $(TEST_OBJS) $(TESTUTIL_OBJS) $(ALL_LIBS)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -no-pie $(TEST_OBJS) $(TESTUTIL_OBJS) $(ALL_LIBS) $(LDLIBS) $(TEST_LDLIBS) -o $@

# A single test file links only the libraries its name asks for, so one
# module's tests build while another module is being worked on; and cfi/
# for tests/util_cfi.c, which every test binary links.
libs_for = $(if $(filter test_format% test_util%,$(1)),$(LIBCFI) $(LIBFORMAT) $(LIBUTIL),$(if $(filter test_record%,$(1)),$(LIBSRC) $(LIBRECORD) $(LIBCFI) $(LIBPACK) $(LIBPYTHON) $(LIBSYM) $(LIBFORMAT) $(LIBUTIL),$(if $(filter test_report% test_sym%,$(1)),$(LIBREPORT) $(LIBSYM) $(LIBCFI) $(LIBFORMAT) $(LIBUTIL),$(ALL_LIBS))))
.SECONDEXPANSION:
$(OUT)/tests/test_%: $(OUT)/tests/test_%.o $(TESTUTIL_OBJS) $$(call libs_for,test_$$*)
	$(call msg,LINK,$@)
	$(Q)$(CC) $(CFLAGS) -no-pie $^ $(LDLIBS) $(TEST_LDLIBS) -o $@

workloads: $(WORKLOADS)

test-build: $(OUT)/stkrec $(OUT)/stkrec-tests $(WORKLOADS)

# The kernel matrix boots Debian's arm64 kernel with a cross-built stkrec
# (build/arm64) when the cross tools could be installed; its test skips,
# saying so, when they could not.
ARM64_BUILD := $(if $(filter x86,$(HOST_ARCH)),$(MAKE) --no-print-directory ARCH=arm64 all workloads)
define run_tests
	$(Q)$(MAKE) --no-print-directory ARCH=$(HOST_ARCH) test-build
	$(Q)if [ -n "$(ARM64_BUILD)" ] && dpkg-query -W -f='$${Status}\n' gcc-aarch64-linux-gnu \
		2>/dev/null | grep -q 'ok installed'; then $(ARM64_BUILD); fi
	$(Q)STKREC=$(CURDIR)/build/stkrec STKREC_WORKLOADS=$(CURDIR)/build/workloads \
		STKREC_SRCDIR=$(CURDIR) build/stkrec-tests --jobs 1 $(1) $(TEST_ARGS)
endef

test: deps browser-deps kernel-deps
	$(call run_tests)

# Only the kernel matrix (tests/kernels/run.sh): this machine's kernel, then
# Debian 12's 6.1 kernels under qemu. KERNELS='*amd64*' (a Criterion filter
# on the test names) picks some.
KERNELS ?= *
test-kernels: deps kernel-deps
	$(call run_tests,--filter 'kernels/$(KERNELS)')

# The reliability suites at full length (~1 h): 120 kills, 10 minutes of
# RSS sampling, 30 minutes of a flight recorder's memory
# (reliability_flight), every truncation offset, the whole fuzz corpus.
soak: deps
	$(Q)$(MAKE) --no-print-directory test-build
	$(Q)STKREC_SOAK=1 STKREC=$(CURDIR)/$(OUT)/stkrec STKREC_WORKLOADS=$(CURDIR)/$(OUT)/workloads \
		STKREC_SRCDIR=$(CURDIR) $(OUT)/stkrec-tests --jobs 1 --verbose \
		--filter 'reliability_*' $(TEST_ARGS)

# --- fuzzing (clang libFuzzer + ASan + UBSan) -------------------------------
FUZZ_CFLAGS := -g -O1 -std=gnu11 -D_GNU_SOURCE -I. -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -DSTKREC_VERSION='"$(VERSION)"'
FUZZ_TIME ?= 60

# Each target compiles only the modules it needs: fuzz_reader* format/ (and
# util/) alone, fuzz_pyline sym/pyline.c alone.
fuzz_srcs = $(if $(filter fuzz_pyline,$(1)),sym/pyline.c,$(if $(filter fuzz_reader%,$(1)),$(FORMAT_SRCS) $(UTIL_SRCS),$(FORMAT_SRCS) $(SYM_SRCS) $(REPORT_SRCS) $(UTIL_SRCS)))
$(OUT)/fuzz/%: tests/fuzz/%.c $$(call fuzz_srcs,$$*) format/*.h sym/*.h report/*.h util/*.h tests/fuzz/fuzz_util.h tests/stream_compare.h
	$(call msg,FUZZ-CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) $< $(call fuzz_srcs,$*) -ldw -lelf -lzstd -llzma -lz -o $@

fuzz-build: $(FUZZERS)

# tests/fuzz/corpus/NAME seeds a target when it exists: every file there is
# replayed as a capture (reliability_files, README's count), so a target
# whose inputs are not captures (fuzz_pyline) starts from its own.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory fuzz-build
	$(Q)for f in $(FUZZERS); do \
		n=$$(basename $$f); mkdir -p $(OUT)/corpus/$$n tests/fuzz/crashes; \
		echo "fuzzing $$n for $(FUZZ_TIME)s"; \
		$$f -max_total_time=$(FUZZ_TIME) -rss_limit_mb=2048 \
			-artifact_prefix=tests/fuzz/crashes/$$n- \
			$(OUT)/corpus/$$n $$(ls -d tests/fuzz/corpus/$$n 2>/dev/null) || exit 1; \
	done

# --- setup, demo, install ----------------------------------------------------
# golang-go: `go tool pprof` reads the --pprof files in the tests.
# help2man, man-db, lintian, dpkg-dev, bash-completion: make man, make deb
# and their tests (tests/test_install.c).
# python3.11-dbg: the DWARF of Debian's python3.11 (its build ID's debug
# file; apt brings python3.11 to the -dbg's version), which python/ reads
# and tests/test_python_offsets.c holds the offsets table against.
DEB_PKGS := clang llvm libbpf-dev bpftool libelf-dev libdw-dev libzstd-dev zlib1g-dev liblzma-dev dwz elfutils \
	libcriterion-dev pkg-config zstd make gcc libxml2-utils python3 chromium nodejs libc6-dbg golang-go \
	python3.11-dbg help2man man-db lintian dpkg-dev bash-completion

# $(call apt_install,PACKAGES,OPTIONS): install those not installed yet.
apt_install = missing=$$(for p in $(1); do \
		dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; \
	done); \
	if [ -n "$$missing" ]; then \
		echo "installing:" $$missing; \
		export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq $(2) $$missing >/dev/null; \
	fi

deps:
	$(Q)$(call apt_install,$(DEB_PKGS)) || exit 1

# make ARCH=arm64 on x86: Debian's cross gcc and the arm64 -dev packages
# (multiarch: they install beside the amd64 ones at the same versions, so apt
# may upgrade an amd64 library to match). The workloads use clang's aarch64
# target, which links with the cross binutils and libc6-dev:arm64.
CROSS_PKGS_arm64 := gcc-aarch64-linux-gnu libbpf-dev:arm64 libelf-dev:arm64 libdw-dev:arm64 \
	libzstd-dev:arm64 zlib1g-dev:arm64 liblzma-dev:arm64

.PHONY: cross-deps-arm64
cross-deps-arm64:
	$(Q)dpkg --print-foreign-architectures | grep -qx arm64 || dpkg --add-architecture arm64
	$(Q)$(call apt_install,$(CROSS_PKGS_arm64),--no-install-recommends) || exit 1

# The kernel matrix: qemu for the guests, busybox-static for their /init,
# cpio and mkfs.ext4 for their initramfs and disk. A machine where these
# cannot be installed skips the matrix (each test says why), so this only
# warns.
KERNEL_PKGS := qemu-system-x86 qemu-system-arm busybox-static cpio e2fsprogs
kernel-deps:
	$(Q)$(call apt_install,$(KERNEL_PKGS),--no-install-recommends) || \
		echo "warning: cannot install $(KERNEL_PKGS): the kernel matrix will skip"
	$(Q)[ "$(HOST_ARCH)" != x86 ] || $(MAKE) --no-print-directory cross-deps-arm64 || \
		echo "warning: cannot install the arm64 cross tools: the arm64 kernel will skip"

# The browser tests (flame graphs, speedscope): npm (Debian ships it apart
# from nodejs, NodeSource's nodejs bundles it) and the locked playwright-core
# and speedscope (its built page).
browser-deps: deps
	$(Q)command -v npm >/dev/null || { export DEBIAN_FRONTEND=noninteractive; \
		apt-get update -qq && apt-get install -y -qq npm >/dev/null; } || exit 1
	$(Q)[ -d tests/browser/node_modules/playwright-core ] && \
		[ -d tests/browser/node_modules/speedscope ] || \
		npm ci --prefix tests/browser --no-audit --no-fund --loglevel=error

# The bundled workload (tests/workloads/demo.c and py/demo.py) recorded and
# explained by demo/run.sh, which tests/test_demo.c runs too.
demo: deps
	$(Q)$(MAKE) --no-print-directory all $(OUT)/workloads/demo $(OUT)/workloads/py/demo.py
	$(Q)demo/run.sh $(OUT)/stkrec $(OUT)/workloads $(OUT)

BENCH_PKGS := linux-perf stress-ng zstd time jq procps

bench: deps
	$(Q)$(MAKE) --no-print-directory deps DEB_PKGS="$(BENCH_PKGS)"
	$(Q)$(MAKE) --no-print-directory all
	$(Q)STKREC=$(OUT)/stkrec tests/bench/run.sh

# --- man pages, bash completion, install, deb ---------------------------------
# The man pages and the completion are made from the -h texts of the stkrec
# just built (dist/man.sh runs help2man on them, dist/completion.sh reads
# the options, event kinds and sort keys), so they cannot drift from them;
# being run, it must be a native build. SOURCE_DATE_EPOCH (default: the
# commit's time) dates the pages and the changelog, for reproducible builds.
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DEB_VERSION := $(VERSION)-1
DEB = $(OUT)/stkrec_$(DEB_VERSION)_$(shell dpkg --print-architecture 2>/dev/null).deb
source_date = $${SOURCE_DATE_EPOCH:-$$([ -e .git ] && git log -1 --format=%ct || date +%s)}

.PHONY: man completion deb
man: $(OUT)/man/stamp
completion: $(OUT)/stkrec.bash

$(OUT)/man/stamp: $(OUT)/stkrec dist/man.sh
	$(call msg,MAN,$(OUT)/man)
	$(Q)rm -rf $(OUT)/man && mkdir -p $(OUT)/man
	$(Q)SOURCE_DATE_EPOCH=$(source_date) dist/man.sh $(OUT)/stkrec $(OUT)/man
	$(Q)touch $@

$(OUT)/stkrec.bash: $(OUT)/stkrec dist/completion.sh dist/stkrec.bash
	$(call msg,GEN,$@)
	$(Q)dist/completion.sh $(OUT)/stkrec >$@

# The binary, the man pages (gzip -9n, as Debian ships them) and the
# completion, under DESTDIR/PREFIX.
install: $(OUT)/stkrec $(OUT)/man/stamp $(OUT)/stkrec.bash
	$(Q)install -D -m 0755 $(OUT)/stkrec $(DESTDIR)$(PREFIX)/bin/stkrec
	$(Q)install -d -m 0755 $(DESTDIR)$(MANDIR)/man1
	$(Q)for f in $(OUT)/man/*.1; do \
		gzip -9n <$$f >$(DESTDIR)$(MANDIR)/man1/$${f##*/}.gz && \
		chmod 0644 $(DESTDIR)$(MANDIR)/man1/$${f##*/}.gz || exit 1; \
	done
	$(Q)install -D -m 0644 $(OUT)/stkrec.bash $(DESTDIR)$(BASHCOMPDIR)/stkrec

# build/stkrec_VERSION-1_ARCH.deb, from `make install PREFIX=/usr` staged in
# build/deb (dist/deb.sh adds what Debian asks of a binary package).
deb:
	$(Q)rm -rf $(OUT)/deb
	$(Q)$(MAKE) --no-print-directory install DESTDIR=$(CURDIR)/$(OUT)/deb/debian/stkrec PREFIX=/usr
	$(call msg,DEB,$(DEB))
	$(Q)SOURCE_DATE_EPOCH=$(source_date) dist/deb.sh $(OUT)/deb $(DEB_VERSION) $(DEB)

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUT) stkrec

-include $(shell find $(OUT) -name '*.d' -type f -not -path '*/kernels/*' 2>/dev/null)
