# gpumemguard - build, test, demo, install.
#
#   make            build build/libgpumemguard.so and the simulated driver
#   make demo       build and run the demo against the simulated driver
#   make test       build and run every test (no GPU needed)
#   make check-asan / check-tsan   the tests under sanitizers
#   make bench      the benchmarks (docs/benchmarks.md)
#   make stress     bounded storms: threads, signals, forks, report paths
#   make mutate     mutation testing of src/ on a fixed sample (slow; docs/testing.md)
#   make install PREFIX=/usr/local DESTDIR=   (LIBDIR= for lib64 systems)
#   make wheel      dist/gpumemguard-VERSION-py3-none-manylinux_*_x86_64.whl (pip install)
#   make help       every target, one line each
#
# Missing Debian packages (libunwind-dev, uthash-dev, libdw-dev, libiberty-dev)
# are installed with apt-get when run as root.

CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda))
CUDA_INC  := $(CUDA_HOME)/include
PREFIX    ?= /usr/local
LIBDIR    ?= $(PREFIX)/lib
BINDIR    ?= $(PREFIX)/bin
INCLUDEDIR ?= $(PREFIX)/include
MAN1DIR   ?= $(PREFIX)/share/man/man1
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig
DESTDIR   ?=
CC        ?= cc
B         ?= build
FUZZ_SECONDS ?= 60
VERSION   := $(shell sed -n 's/^\#define GPUMEMGUARD_VERSION "\(.*\)"/\1/p' include/gpumemguard.h)

# Targets that build nothing need no CUDA headers.
NO_CUDA_GOALS := clean help uninstall fuzz pyclients
ifneq ($(if $(MAKECMDGOALS),$(filter-out $(NO_CUDA_GOALS),$(MAKECMDGOALS)),all),)
ifeq ($(wildcard $(CUDA_INC)/cuda.h),)
$(error CUDA driver headers not found: set CUDA_HOME to a CUDA Toolkit (cuda.h expected in $$CUDA_HOME/include; looked in '$(CUDA_INC)'))
endif
# CUDA 13's headers: the driver entry points of CUDA 13 (cuMemGetDefaultMemPool ...) are wrapped
CUDA_VER := $(shell sed -n 's/^\#define CUDA_VERSION \([0-9]*\).*/\1/p' $(CUDA_INC)/cuda.h | head -1)
ifneq ($(shell [ "0$(CUDA_VER)" -ge 13000 ] && echo ok),ok)
$(error CUDA 13 driver headers needed: $(CUDA_INC)/cuda.h is CUDA_VERSION $(or $(CUDA_VER),unknown); set CUDA_HOME to a CUDA 13 Toolkit)
endif
endif

OPT       ?= -O2 -g
# The library is linked as one unit (link-time optimisation): the allocation
# path crosses hooks/, core/ and base/, and inlining across those files
# takes about a tenth of the instructions it adds per allocation and free
# (docs/benchmarks.md). LTO= turns it off; the sanitizer builds do.
LTO       ?= -flto=auto
WARN      := -Wall -Wextra -Werror
CFLAGS_COMMON := -std=gnu11 $(OPT) $(WARN) -fPIC -I$(CUDA_INC) $(EXTRA_CFLAGS)
# Every function of the library starts on a cache line, every loop on 32
# bytes: the allocation path's cost then moves less with where an unrelated
# change puts its code (a 32-byte shift of the same functions cost 12 ns a
# pair; aligned loops take 10-18 ns off a 32-frame walk, docs/benchmarks.md).
LIB_CFLAGS := $(CFLAGS_COMMON) $(LTO) -Isrc -fvisibility=hidden -foptimize-sibling-calls -falign-functions=64 \
              -falign-loops=32 -pthread
# libiberty.a (libiberty-dev, position-independent) gives the C++ demangler
# for processes without a C++ runtime (report/symbolize.c); --exclude-libs
# keeps its symbols out of the library's exports.
LIB_LDLIBS := -ldl -lunwind -ldw -lelf -lpthread -liberty -Wl,--exclude-libs,libiberty.a
ZDEFS     ?= -Wl,-z,defs

# The layers of SPEC §7 (docs/ARCHITECTURE.md); scripts/check-layers.sh keeps
# every #include pointing down.
LAYERS   := base driver core hooks report cluster
LIB_SRCS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c)) src/guard.c src/guard_main.c src/api.c
LIB_HDRS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.h)) src/driver/hooks.def
LIB_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRCS)) $(B)/obj/gen/page_assets.o
LIB      := $(B)/libgpumemguard.so
SIM      := $(B)/sim/libcuda.so.1
NVML     := $(B)/sim/libnvidia-ml.so.1
CLI      := $(B)/gpumemguard
PC       := $(B)/gpumemguard.pc
DATA     := tests/data/cudart-13.0-getprocaddress.txt

.PHONY: all deps test-deps test demo clean install uninstall help check-asan check-tsan bench fuzz stress pyclients mutate wheel FORCE
all: deps $(LIB) $(SIM) $(NVML) $(CLI)

DEPS_STAMP := $(B)/.deps-ok
TEST_DEPS_STAMP := $(B)/.test-deps-ok
deps: $(DEPS_STAMP)
test-deps: $(TEST_DEPS_STAMP)
# (run again when the script changes: a build directory made before it
# asked for a new package gets that package). The build's packages for
# `make` and `make demo`; the tests' too (jq, clang, tmux, chromium ...) for
# `make test` and the sanitizer suites.
$(DEPS_STAMP): scripts/ensure-deps.sh
	@scripts/ensure-deps.sh build
	@mkdir -p $(B) && touch $@
$(TEST_DEPS_STAMP): scripts/ensure-deps.sh
	@scripts/ensure-deps.sh test
	@mkdir -p $(B) && touch $@

# The compiler and its flags (OPT, LTO, EXTRA_CFLAGS ...) are in a stamp that
# changes when they do, so that `make LTO=` or another OPT in the same build
# directory rebuilds every object instead of linking stale ones.
# The line is made here, once (:=): a target's own LIB_CFLAGS (routes.o's,
# below) would otherwise reach the stamp's recipe when that target is built
# first. Single quotes in flags are escaped for the shell.
FLAGS_STAMP := $(B)/.lib-flags
FLAGS_LINE := $(subst ','\'',$(CC) $(LIB_CFLAGS) | $(LTO) $(OPT) $(ZDEFS) $(LIB_LDLIBS) $(EXTRA_LDFLAGS))
$(FLAGS_STAMP): FORCE
	@mkdir -p $(B)
	@echo '$(FLAGS_LINE)' | cmp -s - $@ || echo '$(FLAGS_LINE)' > $@

$(B)/obj/%.o: src/%.c $(LIB_HDRS) include/gpumemguard.h $(FLAGS_STAMP) | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# The HTML page's own style and code (src/report/page/), as C strings for
# base/page.c: in the library (GPUMEM_REPORT_FORMAT=html) and the command
# (gpumemguard view).
PAGE_SRCS := src/report/page/page.css src/report/page/page.js
PAGE_C    := $(B)/gen/page_assets.c
$(PAGE_C): $(PAGE_SRCS) scripts/gen_page.sh
	@mkdir -p $(dir $@)
	sh scripts/gen_page.sh $(PAGE_SRCS) > $@.tmp && mv $@.tmp $@
$(B)/obj/gen/page_assets.o: $(PAGE_C) $(FLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# dlsym must forward RTLD_NEXT as a tail call; TSan's function-exit hook would
# prevent that, so the file holding it is built without TSan.
$(B)/obj/driver/routes.o: LIB_CFLAGS := $(filter-out -fsanitize=thread,$(LIB_CFLAGS))

# -e gmg_selfrun (src/guard_main.c): running the library itself prints its
# version and usage.
$(LIB): $(LIB_OBJS) $(FLAGS_STAMP)
	$(CC) $(if $(LTO),$(LTO) $(OPT)) -shared -Wl,-soname,libgpumemguard.so -Wl,-e,gmg_selfrun $(ZDEFS) -Wl,-z,now -o $@ $(LIB_OBJS) $(LIB_LDLIBS) $(EXTRA_LDFLAGS)

# ---- the command (src/cli): libc, include/gpumemguard.h, base/signame, base/dumpask.h ----
# The installation directories are baked into the command and the .pc file;
# the stamp changes (and they are rebuilt) when PREFIX or LIBDIR change.
DIRS_STAMP := $(B)/.install-dirs
$(DIRS_STAMP): FORCE
	@mkdir -p $(B)
	@echo '$(PREFIX) $(LIBDIR) $(INCLUDEDIR)' | cmp -s - $@ || echo '$(PREFIX) $(LIBDIR) $(INCLUDEDIR)' > $@
FORCE:

CLI_SRCS := $(wildcard src/cli/*.c) src/base/signame.c src/base/page.c src/base/buf.c src/base/suppress.c
CLI_HDRS := $(wildcard src/cli/*.h) src/base/signame.h src/base/dumpask.h src/cluster/status_layout.h src/base/procstat.h src/base/page.h \
            src/base/buf.h src/base/suppress.h include/gpumemguard.h
CLI_CFLAGS = -std=gnu11 $(OPT) $(WARN) -Iinclude -Isrc -DGMG_LIBDIR='"$(LIBDIR)"' $(EXTRA_CFLAGS)
$(CLI): $(CLI_SRCS) $(CLI_HDRS) $(PAGE_C) $(DIRS_STAMP)
	$(CC) $(CLI_CFLAGS) -o $@ $(CLI_SRCS) $(PAGE_C) $(EXTRA_LDFLAGS)
# One of the command's files compiled alone, as the command compiles it: for
# make mutate's comparison of a mutant's object code (the command itself is
# built in one step above, without these).
$(B)/obj/cli/%.o: src/cli/%.c $(CLI_HDRS) $(DIRS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(CLI_CFLAGS) -c $< -o $@

$(PC): gpumemguard.pc.in include/gpumemguard.h $(DIRS_STAMP)
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' gpumemguard.pc.in > $@

# ---- the simulated driver (tests/sim) ----
$(B)/sim/sim_stubs.c: $(DATA) tests/sim/sim_procaddr.c scripts/gen_sim_stubs.sh
	@mkdir -p $(dir $@)
	sh scripts/gen_sim_stubs.sh $(DATA) tests/sim/sim_procaddr.c > $@

$(SIM): tests/sim/sim.c tests/sim/sim_procaddr.c $(B)/sim/sim_stubs.c tests/sim/sim.h | $(DEPS_STAMP)
	$(CC) $(CFLAGS_COMMON) -fvisibility=hidden -Itests/sim -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ \
	    tests/sim/sim.c tests/sim/sim_procaddr.c $(B)/sim/sim_stubs.c -lpthread

# NVML's double beside it: device memory without a context (tests/sim/nvml.c)
$(NVML): tests/sim/nvml.c $(SIM)
	$(CC) $(CFLAGS_COMMON) -fvisibility=hidden -shared -Wl,-soname,libnvidia-ml.so.1 -o $@ tests/sim/nvml.c \
	    -L$(B)/sim -l:libcuda.so.1

# The real Python clients the tests run under the guard (cuda-bindings,
# numba-cuda, cuda.core), pinned, in $(B)/venv; installed once. Offline, it
# says so and their tests are reported as skipped.
pyclients:
	@scripts/pyclients.sh $(B)

# The Python wheel: library, command and pytest plugin, the libraries they
# need bundled (auditwheel, from PyPI into $(B)/wheel-venv).
wheel: all
	@scripts/wheel.sh $(B)

test: test-deps all pyclients
	@scripts/check-layers.sh --self-test >/dev/null && scripts/check-layers.sh
	@scripts/check-circles.py --self-test >/dev/null && scripts/check-circles.py
	@tests/run.sh $(B)

demo: all
	@scripts/demo.sh $(B)

check-asan: test-deps
	$(MAKE) B=build-asan LTO= OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" all
	@GMG_SANITIZER=asan tests/run.sh build-asan

check-tsan: test-deps
	$(MAKE) B=build-tsan LTO= CC=clang ZDEFS= OPT="-O1 -g -fsanitize=thread" EXTRA_LDFLAGS="-fsanitize=thread" all
	@GMG_SANITIZER=tsan tests/run.sh build-tsan

bench: all
	@scripts/bench.sh $(B)

stress: all
	@scripts/stress.sh $(B)

# Mutation testing (universalmutator, pip-installed in $(B)/mutate-venv): the
# fixed sample of tests/mutants.txt, each mutant built and run against
# `make test` in a scratch copy under $(B)/mutate; prints the score and the
# survivors. Slow: nice -n 19 make mutate. Not in CI.
mutate: | $(DEPS_STAMP)
	@scripts/mutate.sh $(B)

# libFuzzer on the GPUMEM_LIMIT parser, from a copy of the seed corpus;
# crashes are left in $(B)/fuzz/.
fuzz: | $(DEPS_STAMP)
	@mkdir -p $(B)/fuzz
	clang -g -O1 -fsanitize=fuzzer,address,undefined -Isrc -o $(B)/fuzz/fuzz_limit tests/unit/fuzz_limit.c src/base/limit_parse.c
	rm -rf $(B)/fuzz/corpus && mkdir -p $(B)/fuzz/corpus && cp tests/unit/fuzz_corpus/* $(B)/fuzz/corpus/
	$(B)/fuzz/fuzz_limit -max_total_time=$(FUZZ_SECONDS) -artifact_prefix=$(B)/fuzz/ $(B)/fuzz/corpus

INSTALLED := $(DESTDIR)$(LIBDIR)/libgpumemguard.so $(DESTDIR)$(INCLUDEDIR)/gpumemguard.h \
             $(DESTDIR)$(BINDIR)/gpumemguard $(DESTDIR)$(MAN1DIR)/gpumemguard.1 \
             $(DESTDIR)$(PKGCONFIGDIR)/gpumemguard.pc

install: all $(PC)
	install -d $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(PKGCONFIGDIR)
	install -m 0755 $(LIB) $(DESTDIR)$(LIBDIR)/libgpumemguard.so
	install -m 0644 include/gpumemguard.h $(DESTDIR)$(INCLUDEDIR)/gpumemguard.h
	install -m 0755 $(CLI) $(DESTDIR)$(BINDIR)/gpumemguard
	install -m 0644 docs/gpumemguard.1 $(DESTDIR)$(MAN1DIR)/gpumemguard.1
	install -m 0644 $(PC) $(DESTDIR)$(PKGCONFIGDIR)/gpumemguard.pc

uninstall:
	rm -f $(INSTALLED)

clean:
	rm -rf build build-asan build-tsan $(B)

help:
	@echo 'make [B=DIR] TARGET   (B: build directory, default build)'
	@echo '  all          build $$(B)/libgpumemguard.so, the gpumemguard command and the simulated driver (default)'
	@echo '  test         check the layering, then run every test against the simulated driver (no GPU needed)'
	@echo '  pyclients    install the Python clients the tests use (cuda-bindings, numba-cuda, cuda.core) in $$(B)/venv'
	@echo '  demo         build and run the demo: a leaking program under a 256 MiB quota'
	@echo '  check-asan   build in build-asan and run the tests under AddressSanitizer + UBSan'
	@echo '  check-tsan   build in build-tsan (clang) and run the tests under ThreadSanitizer'
	@echo '  stress       bounded storms: threads, signals, forks, report paths'
	@echo '  bench        the benchmarks (docs/benchmarks.md)'
	@echo '  mutate       mutation testing: the sample of tests/mutants.txt against make test (slow; docs/testing.md)'
	@echo '  fuzz         libFuzzer on the GPUMEM_LIMIT parser for FUZZ_SECONDS (default 60)'
	@echo '  wheel        build dist/gpumemguard-VERSION-py3-none-manylinux_*_x86_64.whl: library, command, pytest plugin'
	@echo '  install      install library, header, command, man page, pkg-config file (PREFIX, LIBDIR, DESTDIR)'
	@echo '  uninstall    remove exactly the files install installs (same PREFIX, LIBDIR, DESTDIR)'
	@echo '  deps         install missing build dependencies with apt-get (as root)'
	@echo '  test-deps    the same, and what the tests need (jq, clang, tmux, chromium, a font)'
	@echo '  clean        remove build, build-asan, build-tsan and $$(B)'
	@echo '  help         this list'
