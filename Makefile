# Tessera - one non-recursive Makefile.
#
#   make               build build/tessera (-O2, warnings are errors) and the web UI (build/web)
#   make check         build with ASan+UBSan into build/asan and run every test
#   make run           install missing Debian packages, build, start `tessera dev`
#   make fuzz          build libFuzzer targets with clang into build/fuzz
#   make chaos         the chaos test (tests/chaos, docs/reliability.md): SEED=N DURATION=5m
#   make check-images  build every recipe of images/ and check it in a session (long: docs/images.md)
#   make format        clang-format the sources
#   make V=1           show commands

BUILD    ?= build
CC       ?= cc
SANITIZE ?=
PKGS     := libmicrohttpd jansson sqlite3 libpq openssl libcurl libarchive zlib libzstd libisal yaml-0.1

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN     := -Wall -Wextra -Werror -Wformat=2 -Wformat-security -Wstrict-prototypes -Wvla -Wwrite-strings \
            -Wno-missing-field-initializers -Wno-parentheses
CFLAGS   ?= -O2 -g
ALL_CFLAGS := -std=gnu17 -Isrc $(WARN) $(CFLAGS) $(PKG_CFLAGS) -MMD -MP
ALL_LDFLAGS := $(LDFLAGS)
LIBS     := $(PKG_LIBS) -lwslay -lm

ifneq ($(SANITIZE),)
ALL_CFLAGS  += -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer -O1
ALL_LDFLAGS += -fsanitize=$(SANITIZE)
endif

# The folders of src/ and what each may use: HACKING.md's map, each
# folder's README.md, checked by scripts/check-layers.sh.
COMMON_SRC  := $(sort $(wildcard src/common/*.c))
SCHED_SRC   := $(sort $(wildcard src/sched/*.c))
SIM_SRC     := $(sort $(wildcard src/sim/*.c))
IMAGE_SRC   := $(sort $(wildcard src/image/*.c))
REGISTRY_SRC := $(sort $(wildcard src/registry/*.c))
MANAGER_SRC := $(sort $(wildcard src/manager/*.c src/manager/*/*.c))
AGENT_SRC   := $(sort $(wildcard src/agent/*.c src/agent/*/*.c))
RUNNER_SRC  := $(sort $(wildcard src/runner/*.c))
CLI_SRC     := $(sort $(wildcard src/cli/*.c))
FGPU_AGENT_SRC := src/fgpu/region.c src/fgpu/config.c # the agent makes and reads each container's region and config
LIB_SRC     := $(COMMON_SRC) $(SCHED_SRC) $(SIM_SRC) $(IMAGE_SRC) $(REGISTRY_SRC) $(MANAGER_SRC) $(AGENT_SRC) $(FGPU_AGENT_SRC) $(CLI_SRC)
TESSERA_SRC := src/main.c $(LIB_SRC)

FGPU_SRC    := $(sort $(wildcard src/fgpu/*.c))
UNIT_SRC    := $(sort $(wildcard tests/unit/test_*.c))
FUZZ_SRC    := $(sort $(wildcard tests/fuzz/fuzz_*.c))
TESTLIB_SRC := tests/lib/test.c

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(1))

TESSERA     := $(BUILD)/tessera
RUNNER      := $(if $(RUNNER_SRC),$(BUILD)/tessera-runner)
MONITOR     := $(BUILD)/tessera-monitor
FGPU_LIB    := $(BUILD)/libtessera-fgpu.so
FAKE_LIBS   := $(BUILD)/libtessera-fake-cuda.so $(BUILD)/libtessera-fake-nvml.so
UNIT_BINS   := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRC))
FUZZ_BINS   := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz-replay/%,$(FUZZ_SRC))
LIB_OBJS    := $(call obj,$(LIB_SRC))

# The web UI (web/, docs/web-ui.md): esbuild bundles it into $(BUILD)/web,
# which the manager beside it serves (web_dir).  The npm packages come from
# a cache outside the repository (scripts/web-deps.sh: npm ci once per
# package-lock.json; no network after that).  Prints the bundle's gzip sizes.
WEB_SRC := web/build.mjs web/index.html web/package.json web/package-lock.json scripts/web-deps.sh \
           $(sort $(wildcard web/src/*.js web/src/*.css web/src/*/*.css))
WEB     := $(BUILD)/web/index.html

.PHONY: all check check-images chaos tests run deps test-deps fuzz format clean docs
all: $(TESSERA) $(RUNNER) $(MONITOR) $(FGPU_LIB) $(FAKE_LIBS) $(WEB) $(BUILD)/layers.ok

# The layout's rules (HACKING.md, "Layout"): every include, and every
# symbol an object of the program takes from another, stays within what
# its folder's README.md says it may use.
$(BUILD)/layers.ok: scripts/check-layers.sh $(shell find src -name '*.[ch]' -o -name README.md) \
		$(call obj,$(TESSERA_SRC))
	@$(if $(Q),echo "  CHECK   layers")
	$(Q)scripts/check-layers.sh --objects $(BUILD)/obj src
	$(Q)touch $@

$(WEB): $(WEB_SRC)
	@$(if $(Q),echo "  WEB     $(BUILD)/web")
	$(Q)modules=$$(scripts/web-deps.sh) && node web/build.mjs --node-modules "$$modules" --out $(BUILD)/web

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(TESSERA): $(call obj,$(TESSERA_SRC))
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# The runner is bind-mounted into every container: static, libc only, and
# never built with sanitizers (their runtimes do not link statically).  Of
# src/common it takes only the x-allocators and the UTF-8 reader.
RUNNER_COMMON := src/common/xalloc.c src/common/utf8.c
$(BUILD)/tessera-runner: $(RUNNER_SRC) $(RUNNER_COMMON) $(wildcard src/runner/*.h) src/common/compat.h src/common/banned.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu17 -Isrc $(WARN) -O2 -g -static -o $@ $(RUNNER_SRC) $(RUNNER_COMMON)

# The fGPU hook (src/fgpu, docs/fgpu.md) is preloaded into other people's
# programs: position independent, only its wrappers exported, libc only,
# and never built with sanitizers (their runtimes refuse to be preloaded
# behind the program).  The driver's types are our own
# (src/common/cuda_abi.h): no CUDA toolkit is needed to build.
FGPU_CFLAGS := -std=gnu17 -Isrc $(WARN) -O2 -g -fPIC -fvisibility=hidden
$(BUILD)/libtessera-fgpu.so: $(FGPU_SRC) $(wildcard src/fgpu/*.h) src/fgpu/libtessera-fgpu.map src/common/compat.h \
		src/common/nvml_abi.h src/common/cuda_abi.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FGPU_CFLAGS) -shared -Wl,--version-script=src/fgpu/libtessera-fgpu.map -Wl,-z,now -o $@ \
		$(FGPU_SRC) -ldl -lpthread

# The fake CUDA driver and NVML (src/fakecuda/fake.h): the mock GPU
# plugin binds them into containers in place of NVIDIA's libraries (so they
# sit beside tessera), and the hook's tests put them behind the hook.  Like
# the hook: libc only, no sanitizers; -Bsymbolic so that the addresses
# cuGetProcAddress hands out are the fake's own, as a real driver's are.
FAKE_CFLAGS := -std=gnu17 -Isrc $(WARN) -O2 -g -fPIC -fvisibility=hidden
FAKE_COMMON := src/fakecuda/fake_common.c src/fakecuda/fake_activity.c
$(BUILD)/libtessera-fake-%.so: src/fakecuda/fake_%.c $(FAKE_COMMON) src/fakecuda/fake.h src/common/nvml_abi.h \
		src/common/cuda_abi.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(FAKE_CFLAGS) -shared -Wl,-Bsymbolic -Wl,-soname,$(notdir $@) -o $@ $< $(FAKE_COMMON) \
		-ldl -lpthread

# The fakes' own arithmetic in a unit test (no CUDA headers needed).
$(BUILD)/tests/test_fake_%: tests/unit/test_fake_%.c $(call obj,$(TESTLIB_SRC)) $(FAKE_COMMON) src/fakecuda/fake.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,$(TESTLIB_SRC)) $(FAKE_COMMON) src/common/buf.c \
		src/common/xalloc.c -lpthread

# The fGPU library's own parts in unit tests (config, region, limiter: no
# driver needed), built like the other tests.
FGPU_UNIT_SRC := src/fgpu/limiter.c $(FGPU_AGENT_SRC) src/common/buf.c src/common/xalloc.c
$(BUILD)/tests/test_fgpu_%: tests/unit/test_fgpu_%.c $(call obj,$(TESTLIB_SRC)) $(FGPU_UNIT_SRC) $(wildcard src/fgpu/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,$(TESTLIB_SRC)) $(FGPU_UNIT_SRC) -lpthread -lm

$(BUILD)/fuzz-replay/fuzz_fgpu_%: tests/fuzz/fuzz_fgpu_%.c $(call obj,tests/fuzz/replay.c) $(FGPU_UNIT_SRC)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,tests/fuzz/replay.c) $(FGPU_UNIT_SRC) -lpthread -lm

# The registry of kept terminals (src/agent/pty_keep.c) is shared by
# threads: its unit test again, with ThreadSanitizer, which test_pty_keep
# runs (a compiler that cannot leaves a stub that says why; it skips).
PTY_KEEP_TSAN := $(BUILD)/tests/tsan/test_pty_keep
$(PTY_KEEP_TSAN): tests/unit/test_pty_keep.c src/agent/pty_keep.c src/agent/pty_keep.h src/common/terminal_id.h \
		tests/lib/test.c src/common/buf.c src/common/xalloc.c src/common/cond_wait.c src/common/timeutil.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@ (tsan)")
	$(Q)$(CC) -std=gnu17 $(WARN) -O1 -g -fsanitize=thread -DTEST_UNDER_TSAN -Isrc -o $@ $(filter %.c,$^) -lpthread \
		2>$@.log || { echo "tsan build failed: $$(head -c 300 $@.log)" >$@; }

# The monitor of each running container (src/monitor_main.c): from an
# archive of the library objects, so that only what monitor_main() reaches
# is linked, and only the shared libraries that needs (jansson, libc).
$(BUILD)/libtessera.a: $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(MONITOR): src/monitor_main.c $(BUILD)/libtessera.a
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(BUILD)/libtessera.a -Wl,--as-needed $(LIBS)

# Unit tests link the library objects (everything but src/main.c).
$(BUILD)/tests/%: tests/unit/%.c $(call obj,$(TESTLIB_SRC)) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,$(TESTLIB_SRC)) $(LIB_OBJS) $(LIBS)

# Fuzz targets built as corpus replayers (tests/fuzz/replay.c supplies main;
# a separate object, so that the target's .d file lists what it includes).
$(BUILD)/fuzz-replay/%: tests/fuzz/%.c $(call obj,tests/fuzz/replay.c) $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,tests/fuzz/replay.c) $(LIB_OBJS) $(LIBS)

$(BUILD)/test-tool: tests/helper/test-tool.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS)

# The container driver of t3020 and bench/container-start.sh (its own
# monitor executable too).
$(BUILD)/container-tool: tests/helper/container-tool.c $(LIB_OBJS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(LIB_OBJS) $(LIBS)

tests: $(TESSERA) $(RUNNER) $(MONITOR) $(FGPU_LIB) $(FAKE_LIBS) $(WEB) $(UNIT_BINS) $(FUZZ_BINS) $(BUILD)/test-tool $(BUILD)/container-tool \
       $(PTY_KEEP_TSAN)

.SECONDARY: $(call obj,$(TESTLIB_SRC) tests/fuzz/replay.c)

deps:
	$(Q)scripts/install-deps.sh build

test-deps:
	$(Q)scripts/install-deps.sh test

check: test-deps
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan SANITIZE=address,undefined,float-cast-overflow tests
	$(Q)$(MAKE) --no-print-directory all
	$(Q)BUILD=build/asan tests/run.sh

# The chaos test (docs/reliability.md): a cluster in network namespaces
# under a seeded fault schedule; DURATION of faults (default 5m), SEED to
# replay a run (default: drawn and printed).  Needs root.  The release build:
# a sanitizer build is what the short run in `make check` uses (t9000).
DURATION ?= 5m
chaos: test-deps $(TESSERA) $(RUNNER) $(MONITOR) $(FGPU_LIB) $(FAKE_LIBS) $(BUILD)/test-tool $(BUILD)/container-tool
	$(Q)BUILD=$(BUILD) DURATION=$(DURATION) $(if $(SEED),SEED=$(SEED)) tests/chaos/run.sh

# Every recipe of images/ (or IMAGES="images/a.recipe ..."): built with
# the release binary (cached), pushed, run in a session and checked; a
# summary table at the end (docs/images.md).
check-images: all $(BUILD)/test-tool
	$(Q)BUILD=$(BUILD) tests/images/check-images.sh $(IMAGES)

run: deps
	$(Q)$(MAKE) --no-print-directory -j$$(nproc) all
	$(Q)exec $(TESSERA) dev

# libFuzzer builds (clang) for longer fuzzing sessions: build/fuzz/fuzz_*
# (tests/fuzz/run-fuzzers.sh builds them this way and runs them).
FUZZ_LIB_SRC := $(LIB_SRC) $(FGPU_UNIT_SRC)
FUZZ_LIB_OBJS := $(patsubst %.c,build/fuzz/obj/%.o,$(sort $(FUZZ_LIB_SRC)))
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link" SANITIZE=address,undefined build/fuzz/lib.stamp
	$(Q)for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); echo "  FUZZ    build/fuzz/$$n"; \
		clang -std=gnu17 -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all $(PKG_CFLAGS) -Isrc \
			-o build/fuzz/$$n $$f $(FUZZ_LIB_OBJS) $(LIBS) || exit 1; done

build/fuzz/lib.stamp: $(FUZZ_LIB_OBJS)
	@touch $@

docs: $(TESSERA)
	$(Q)$(TESSERA) openapi > docs/openapi.json

format:
	clang-format -i $(TESSERA_SRC) $(wildcard src/*/*.h src/*/*/*.h) $(UNIT_SRC) $(FUZZ_SRC)

clean:
	rm -rf build

include tests/fgpu/fgpu.mk

-include $(shell find build -name '*.d' 2>/dev/null)
