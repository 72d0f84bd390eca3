# tests/fgpu/fgpu.mk - the fGPU hook against the fake driver (included by
# the Makefile).
#
#   $(BUILD)/tests/fgpu_client     the CUDA program the tests run with the hook
#                                  preloaded: linked against the fake driver and
#                                  NVML by name (as programs link -lcuda), never
#                                  sanitized (the preloaded hook is not either)
#   $(BUILD)/tests/test_fgpu_hook  the tests (tests/run.sh runs it)
#   $(BUILD)/tests/cuda_abi_ours,  src/common/cuda_abi.h's constants and
#     cuda_abi_nvidia              layouts, and NVIDIA's cuda.h's (built
#                                  only where CUDA_INC has one), for the
#                                  tests to compare
#   $(BUILD)/tests/fgpu-tsan/      the hook and a client built with
#                                  -fsanitize=thread, for the threads test

FGPU_CLIENT      := $(BUILD)/tests/fgpu_client
FGPU_HOOK_TEST   := $(BUILD)/tests/test_fgpu_hook
FGPU_TSAN_DIR    := $(BUILD)/tests/fgpu-tsan
FGPU_TSAN        := $(FGPU_TSAN_DIR)/libtessera-fgpu.so $(FGPU_TSAN_DIR)/fgpu_client
FGPU_CLIENT_LIBS := -L$(BUILD) -l:libtessera-fake-cuda.so -l:libtessera-fake-nvml.so -ldl -lpthread

$(FGPU_CLIENT): tests/fgpu/fgpu_client.c src/fgpu/region.c src/fgpu/region.h src/common/nvml_abi.h src/common/cuda_abi.h \
		$(FAKE_LIBS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu17 $(WARN) -O2 -g -Isrc -o $@ $< src/fgpu/region.c \
		$(FGPU_CLIENT_LIBS) -Wl,-rpath,'$$ORIGIN/..'

CUDA_INC         ?= /usr/local/cuda/include
CUDA_ABI_CHECK   := $(BUILD)/tests/cuda_abi_ours $(if $(wildcard $(CUDA_INC)/cuda.h),$(BUILD)/tests/cuda_abi_nvidia)

$(BUILD)/tests/cuda_abi_ours: tests/fgpu/cuda_abi_check.c src/common/cuda_abi.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu17 $(WARN) -Isrc -o $@ $<

$(BUILD)/tests/cuda_abi_nvidia: tests/fgpu/cuda_abi_check.c src/common/cuda_abi.h $(CUDA_INC)/cuda.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -std=gnu17 $(WARN) -Isrc -DWITH_NVIDIA_CUDA_H -I$(CUDA_INC) -o $@ $<

$(FGPU_HOOK_TEST): tests/fgpu/test_fgpu_hook.c $(call obj,$(TESTLIB_SRC)) src/fgpu/region.c src/common/buf.c $(wildcard src/fgpu/*.h) \
		$(FGPU_CLIENT) $(FGPU_LIB) $(FAKE_LIBS) $(FGPU_TSAN) $(CUDA_ABI_CHECK)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(call obj,$(TESTLIB_SRC)) src/fgpu/region.c \
		src/common/buf.c src/common/xalloc.c -lpthread

# ThreadSanitizer: the hook (but real.c, whose dlsym must stay a tail call
# into glibc) and the client instrumented; the fake is not.  The test
# preloads libtsan (its path in libtsan.path) before the hook: the runtime
# must be initialised before the hook's dlsym is first called.  When the
# compiler cannot, a stub script says why and the test skips.
FGPU_TSAN_FLAGS := -std=gnu17 -Isrc $(WARN) -O1 -g -fsanitize=thread -fPIC
$(FGPU_TSAN_DIR)/libtessera-fgpu.so: $(FGPU_SRC) $(wildcard src/fgpu/*.h) src/fgpu/libtessera-fgpu.map
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@ (tsan)")
	$(Q)$(CC) -print-file-name=libtsan.so >$(FGPU_TSAN_DIR)/libtsan.path
	$(Q)$(CC) $(FGPU_TSAN_FLAGS) -fvisibility=hidden -fno-sanitize=all -c src/fgpu/real.c -o $(FGPU_TSAN_DIR)/real.o
	$(Q)$(CC) $(FGPU_TSAN_FLAGS) -fvisibility=hidden -shared -Wl,--version-script=src/fgpu/libtessera-fgpu.map \
		-o $@ $(filter-out src/fgpu/real.c,$(FGPU_SRC)) $(FGPU_TSAN_DIR)/real.o -ldl -lpthread \
		2>$(FGPU_TSAN_DIR)/build.log || { echo "tsan build failed: $$(head -c 300 $(FGPU_TSAN_DIR)/build.log)" >$@; }

$(FGPU_TSAN_DIR)/fgpu_client: tests/fgpu/fgpu_client.c src/fgpu/region.c src/fgpu/region.h $(FAKE_LIBS)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LD      $@ (tsan)")
	$(Q)$(CC) $(FGPU_TSAN_FLAGS) -o $@ $< src/fgpu/region.c $(FGPU_CLIENT_LIBS) -Wl,-rpath,'$$ORIGIN/../..' \
		2>$(FGPU_TSAN_DIR)/client-build.log || { echo "tsan build failed: $$(head -c 300 $(FGPU_TSAN_DIR)/client-build.log)" >$@; }

tests: $(FGPU_HOOK_TEST)
