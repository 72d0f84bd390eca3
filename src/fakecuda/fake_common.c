/* fake_common.c - see fake.h: the fake devices' configuration, their
 * memory in use, and the call counters, linked into both fake libraries. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fakecuda/fake.h"

#define MAX_SYMBOLS 512

static struct fake_config config;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;
static uint64_t used_here[FAKE_MAX_DEVICES];
static uint64_t *used_shared; /* the state file's counters, or NULL */
static int log_fd = -1;

/* "123", "4g", "512MiB": 0 if it does not parse. */
static uint64_t parse_size(const char *s)
{
        char *end;
        if (!s || !isdigit((unsigned char)*s))
                return 0;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno)
                return 0;
        int shift = 0;
        switch (tolower((unsigned char)*end)) {
        case 'k':
                shift = 10;
                break;
        case 'm':
                shift = 20;
                break;
        case 'g':
                shift = 30;
                break;
        case 't':
                shift = 40;
                break;
        case '\0':
                break;
        default:
                return 0;
        }
        return (uint64_t)v << shift;
}

static long env_long(const char *name, long def, long lo, long hi)
{
        const char *s = getenv(name);
        char *end;
        if (!s || !*s)
                return def;
        long v = strtol(s, &end, 10);
        return *end || v < lo || v > hi ? def : v;
}

static void open_state(const char *path)
{
        size_t size = sizeof(uint64_t) * FAKE_MAX_DEVICES;
        int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
        if (fd < 0)
                return;
        if (ftruncate(fd, (off_t)size) == 0) {
                void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
                if (p != MAP_FAILED)
                        used_shared = p;
        }
        close(fd);
}

/* TESSERA_FAKE_CUDA_INDICES: "3,5" makes devices 0 and 1 the node's 3 and
 * 5; the rest (or all, when it does not parse) keep their own numbers. */
static void parse_indices(const char *s)
{
        int idx[FAKE_MAX_DEVICES], n = 0;
        char *end;

        for (int i = 0; i < FAKE_MAX_DEVICES; i++)
                config.node_index[i] = i;
        while (s && *s && n < FAKE_MAX_DEVICES) {
                long v = strtol(s, &end, 10);
                if (end == s || v < 0 || v >= FAKE_MAX_DEVICES || (*end && *end != ','))
                        return;
                idx[n++] = (int)v;
                s = *end ? end + 1 : end;
        }
        memcpy(config.node_index, idx, sizeof(int) * (size_t)n);
}

static void load_config(void)
{
        const char *model = getenv("TESSERA_FAKE_CUDA_MODEL");
        const char *state = getenv("TESSERA_FAKE_CUDA_STATE");
        const char *log = getenv("TESSERA_FAKE_CUDA_LOG");
        uint64_t memory = parse_size(getenv("TESSERA_FAKE_CUDA_MEMORY"));

        config.devices = (int)env_long("TESSERA_FAKE_CUDA_DEVICES", 1, 0, FAKE_MAX_DEVICES);
        config.memory = memory ? memory : 16ull << 30;
        config.sm_count = (int)env_long("TESSERA_FAKE_CUDA_SM_COUNT", 108, 1, 100000);
        snprintf(config.model, sizeof(config.model), "%s", model && *model ? model : "Tessera Fake GPU");
        parse_indices(getenv("TESSERA_FAKE_CUDA_INDICES"));
        if (state && *state)
                open_state(state);
        if (log && *log)
                log_fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
}

const struct fake_config *fake_config(void)
{
        pthread_once(&config_once, load_config);
        return &config;
}

bool fake_mem_take(int d, uint64_t bytes)
{
        const struct fake_config *c = fake_config();
        uint64_t *used = used_shared ? &used_shared[d] : &used_here[d];
        uint64_t old = __atomic_load_n(used, __ATOMIC_RELAXED);

        do {
                if (old > c->memory || bytes > c->memory - old)
                        return false;
        } while (!__atomic_compare_exchange_n(used, &old, old + bytes, true, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
        if (used_shared)
                __atomic_add_fetch(&used_here[d], bytes, __ATOMIC_RELAXED);
        return true;
}

void fake_mem_give(int d, uint64_t bytes)
{
        fake_config();
        if (used_shared)
                __atomic_sub_fetch(&used_shared[d], bytes, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&used_here[d], bytes, __ATOMIC_RELAXED);
}

uint64_t fake_mem_used_here(int d)
{
        return d >= 0 && d < FAKE_MAX_DEVICES ? __atomic_load_n(&used_here[d], __ATOMIC_RELAXED) : 0;
}

uint64_t fake_mem_used_device(int d)
{
        fake_config();
        if (d < 0 || d >= FAKE_MAX_DEVICES)
                return 0;
        return __atomic_load_n(used_shared ? &used_shared[d] : &used_here[d], __ATOMIC_RELAXED);
}

/* ---- call counters ---- */

struct counter {
        const char *name;
        unsigned long calls;
};

static struct counter counters[MAX_SYMBOLS];

void fake_count(const char *name)
{
        fake_config();
        /* lock-free, by address: each entry point's __func__ is one string,
         * so the fake costs a few compares and an atomic add per call */
        for (int i = 0; i < MAX_SYMBOLS; i++) {
                const char *seen = __atomic_load_n(&counters[i].name, __ATOMIC_ACQUIRE);
                if (!seen && __atomic_compare_exchange_n(&counters[i].name, &seen, name, false, __ATOMIC_ACQ_REL,
                                                         __ATOMIC_ACQUIRE))
                        seen = name;
                if (seen == name) {
                        __atomic_fetch_add(&counters[i].calls, 1, __ATOMIC_RELAXED);
                        break;
                }
        }
        if (log_fd >= 0) {
                char line[160];
                int n = snprintf(line, sizeof(line), "%d %s\n", (int)getpid(), name);
                if (n > 0 && write(log_fd, line, (size_t)n) < 0)
                        return;
        }
}

unsigned long fake_calls(const char *name)
{
        unsigned long n = 0;

        for (int i = 0; i < MAX_SYMBOLS; i++) {
                const char *seen = __atomic_load_n(&counters[i].name, __ATOMIC_ACQUIRE);
                if (!seen)
                        break;
                if (strcmp(seen, name) == 0)
                        n += __atomic_load_n(&counters[i].calls, __ATOMIC_RELAXED);
        }
        return n;
}
