# gpumemguard - build, test, demo, install.
#
#   make            build build/libgpumemguard.so and the simulated driver
#   make demo       build and run the demo against the simulated driver
#   make test       build and run every test (no GPU needed)
#   make check-asan / check-tsan   the tests under sanitizers
#   make bench      the benchmarks (docs/benchmarks.md)
#   make stress     bounded storms: threads, signals, forks, report paths
#   make install PREFIX=/usr/local DESTDIR=
#
# Missing Debian packages (libunwind-dev, uthash-dev, libdw-dev) are installed
# with apt-get when run as root.

CUDA_HOME ?= $(firstword $(wildcard /usr/local/cuda))
CUDA_INC  := $(CUDA_HOME)/include
PREFIX    ?= /usr/local
DESTDIR   ?=
CC        ?= cc
B         ?= build

ifeq ($(wildcard $(CUDA_INC)/cuda.h),)
$(error CUDA driver headers not found: set CUDA_HOME to a CUDA Toolkit (cuda.h expected in $$CUDA_HOME/include; looked in '$(CUDA_INC)'))
endif

OPT       ?= -O2 -g
WARN      := -Wall -Wextra -Werror
CFLAGS_COMMON := -std=gnu11 $(OPT) $(WARN) -fPIC -I$(CUDA_INC) $(EXTRA_CFLAGS)
LIB_CFLAGS := $(CFLAGS_COMMON) -Isrc -fvisibility=hidden -foptimize-sibling-calls -pthread
LIB_LDLIBS := -ldl -lunwind -ldw -lpthread
ZDEFS     ?= -Wl,-z,defs

# The layers of SPEC §7 (docs/ARCHITECTURE.md); scripts/check-layers.sh keeps
# every #include pointing down.
LAYERS   := base driver core hooks report
LIB_SRCS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.c)) src/guard.c
LIB_HDRS := $(foreach l,$(LAYERS),$(wildcard src/$(l)/*.h)) src/driver/hooks.def
LIB_OBJS := $(patsubst src/%.c,$(B)/obj/%.o,$(LIB_SRCS))
LIB      := $(B)/libgpumemguard.so
SIM      := $(B)/sim/libcuda.so.1
DATA     := tests/data/cudart-13.0-getprocaddress.txt

.PHONY: all deps test demo clean install check-asan check-tsan bench fuzz stress
all: deps $(LIB) $(SIM)

DEPS_STAMP := $(B)/.deps-ok
deps: $(DEPS_STAMP)
$(DEPS_STAMP):
	@scripts/ensure-deps.sh
	@mkdir -p $(B) && touch $@

$(B)/obj/%.o: src/%.c $(LIB_HDRS) include/gpumemguard.h | $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(LIB_CFLAGS) -c $< -o $@

# dlsym must forward RTLD_NEXT as a tail call; TSan's function-exit hook would
# prevent that, so the file holding it is built without TSan.
$(B)/obj/driver/routes.o: LIB_CFLAGS := $(filter-out -fsanitize=thread,$(LIB_CFLAGS))

$(LIB): $(LIB_OBJS)
	$(CC) -shared -Wl,-soname,libgpumemguard.so $(ZDEFS) -Wl,-z,now -o $@ $^ $(LIB_LDLIBS) $(EXTRA_LDFLAGS)

# ---- the simulated driver (tests/sim) ----
$(B)/sim/sim_stubs.c: $(DATA) tests/sim/sim_procaddr.c scripts/gen_sim_stubs.sh
	@mkdir -p $(dir $@)
	sh scripts/gen_sim_stubs.sh $(DATA) tests/sim/sim_procaddr.c > $@

$(SIM): tests/sim/sim.c tests/sim/sim_procaddr.c $(B)/sim/sim_stubs.c tests/sim/sim.h | $(DEPS_STAMP)
	$(CC) $(CFLAGS_COMMON) -fvisibility=hidden -Itests/sim -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ \
	    tests/sim/sim.c tests/sim/sim_procaddr.c $(B)/sim/sim_stubs.c -lpthread

test: all
	@scripts/check-layers.sh --self-test >/dev/null && scripts/check-layers.sh
	@tests/run.sh $(B)

demo: all
	@scripts/demo.sh $(B)

check-asan:
	$(MAKE) B=build-asan OPT="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all" \
	    EXTRA_LDFLAGS="-fsanitize=address,undefined" all
	@GMG_SANITIZER=asan tests/run.sh build-asan

check-tsan:
	$(MAKE) B=build-tsan CC=clang ZDEFS= OPT="-O1 -g -fsanitize=thread" EXTRA_LDFLAGS="-fsanitize=thread" all
	@GMG_SANITIZER=tsan tests/run.sh build-tsan

bench: all
	@scripts/bench.sh $(B)

stress: all
	@scripts/stress.sh $(B)

install: all
	install -d $(DESTDIR)$(PREFIX)/lib $(DESTDIR)$(PREFIX)/include
	install -m 0755 $(LIB) $(DESTDIR)$(PREFIX)/lib/libgpumemguard.so
	install -m 0644 include/gpumemguard.h $(DESTDIR)$(PREFIX)/include/gpumemguard.h

clean:
	rm -rf build build-asan build-tsan
