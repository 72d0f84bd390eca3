#!/bin/bash
test_description='an agent with GPUs refuses to start when a file their kernels need is missing (the mock GPUs'"'"' fake driver and NVML, the fGPU library for fractions), naming it, instead of offering GPUs that fail every session'
. "$(dirname "$0")/../lib/test-lib.sh"

# agent_with EXTRA_CONF_LINES: run an agent (no manager needed: it stops
# before reaching one) with mock GPUs; its output in $TMP/agent.out, RC
agent_with() {
        head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$TMP/secret" && chmod 600 "$TMP/secret" &&
        printf "manager = http://127.0.0.1:1\nstate_dir = %s\ncluster_secret_file = %s\nnetwork = none\nmock_gpus = 2\n%s\n" \
                "$TMP/state" "$TMP/secret" "$1" >"$TMP/agent.conf" &&
        { timeout 30 "$TESSERA" agent --config "$TMP/agent.conf" >"$TMP/agent.out" 2>&1; RC=$?; } &&
        cat "$TMP/agent.out"
}

test_expect_success 'the mock GPUs'"'"' driver missing: the agent stops at once, naming it' '
        agent_with "mock_cuda_library = $TMP/none/libcuda.so.1" &&
        test $RC = 1 &&
        grep -q "the mock GPUs'"'"' driver '"'"'$TMP/none/libcuda.so.1'"'"' is missing" "$TMP/agent.out" &&
        grep -q "no kernel could use this node'"'"'s 2 mock GPU(s)" "$TMP/agent.out"
'

test_expect_success 'the mock GPUs'"'"' NVML missing: the same' '
        agent_with "mock_nvml_library = $TMP/none/libnvidia-ml.so.1" &&
        test $RC = 1 && grep -q "the mock GPUs'"'"' NVML '"'"'$TMP/none/libnvidia-ml.so.1'"'"' is missing" "$TMP/agent.out"
'

test_expect_success 'fractional GPUs without the fGPU library: the same' '
        agent_with "fgpu_per_gpu = 1
fgpu_library = $TMP/none/libtessera-fgpu.so" &&
        test $RC = 1 && grep -q "the fGPU library '"'"'$TMP/none/libtessera-fgpu.so'"'"' is missing" "$TMP/agent.out"
'

test_done
