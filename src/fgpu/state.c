/* state.c - the process's hook state: one initialisation (the config, the
 * real libraries, the region), logging, charging, and the table of what
 * each allocation was charged, so frees refund exactly that. */
#include "common/compat.h"

#include <dlfcn.h>
#include <pthread.h>

#include "fgpu/hook.h"

struct fgpu_state fgpu;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool logging;
static CUresult (*real_ctx_get_device)(CUdevice *);
static nvmlReturn_t (*real_nvml_index)(nvmlDevice_t, unsigned int *);

void fgpu_log(const char *fmt, ...)
{
        char line[512];
        va_list ap;

        if (!logging)
                return;
        int n = snprintf(line, sizeof(line), "tessera-fgpu[%d]: ", (int)getpid());
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
        va_end(ap);
        size_t len = strlen(line);
        line[len++] = '\n';
        if (write(STDERR_FILENO, line, len) < 0)
                return;
}

static void *open_real(const char *env, const char *def)
{
        const char *path = getenv(env);
        void *h = dlopen(path && *path ? path : def, RTLD_NOW | RTLD_GLOBAL);
        if (!h)
                fgpu_log("cannot load %s: %s", path && *path ? path : def, dlerror());
        return h;
}

static void init(void)
{
        logging = getenv("TESSERA_FGPU_LOG") && *getenv("TESSERA_FGPU_LOG");
        fgpu_config_load(&fgpu.config);
        fgpu.active = fgpu.config.memory_limited || fgpu.config.sm_limited || fgpu.config.closed;
        if (fgpu.config.closed)
                fgpu_log("configuration refused (%s): allocations and launches will fail", fgpu.config.error);
        fgpu.cuda = open_real("TESSERA_FGPU_REAL_LIBCUDA", "libcuda.so.1");
        fgpu.nvml = open_real("TESSERA_FGPU_REAL_LIBNVML", "libnvidia-ml.so.1");
        for (struct fgpu_symbol *const *t = fgpu_symbol_tables; *t; t++) {
                for (struct fgpu_symbol *s = *t; s->name; s++) {
                        void *lib = s->nvml ? fgpu.nvml : fgpu.cuda;
                        *s->real = lib ? fgpu_real_dlsym(lib, s->name) : NULL;
                }
        }
        if (fgpu.cuda)
                real_ctx_get_device = (CUresult(*)(CUdevice *))fgpu_real_dlsym(fgpu.cuda, "cuCtxGetDevice");
        if (fgpu.nvml)
                real_nvml_index =
                        (nvmlReturn_t(*)(nvmlDevice_t, unsigned int *))fgpu_real_dlsym(fgpu.nvml, "nvmlDeviceGetIndex");
        if (!fgpu.active)
                return;
        char path[4200];
        if (fgpu.config.region[0])
                snprintf(path, sizeof(path), "%s", fgpu.config.region);
        else
                snprintf(path, sizeof(path), "/tmp/tessera-fgpu-%u.region", (unsigned)getuid());
        if (fgpu_region_open(path, true, &fgpu.region, fgpu.region_error, sizeof(fgpu.region_error)) < 0) {
                /* no shared budget: closed, as a bad config is */
                fgpu.config.closed = true;
                fgpu_log("%s: allocations and launches will fail", fgpu.region_error);
                return;
        }
        fgpu_region_enter(fgpu.region);
        fgpu_log("limits active; region %s", path);
}

/* init has run, for the calls after it: one load instead of pthread_once */
static bool ready;

static void init_once(void)
{
        init();
        __atomic_store_n(&ready, true, __ATOMIC_RELEASE);
}

void fgpu_init(void)
{
        if (!__atomic_load_n(&ready, __ATOMIC_ACQUIRE))
                pthread_once(&once, init_once);
}

int fgpu_current_device(void)
{
        CUdevice d;
        if (!real_ctx_get_device || real_ctx_get_device(&d) != CUDA_SUCCESS || d < 0 || d >= FGPU_MAX_DEVICES)
                return -1;
        return (int)d;
}

uint64_t fgpu_memory_limit(int d)
{
        return d >= 0 && d < FGPU_MAX_DEVICES ? fgpu.config.memory[d] : 0;
}

int fgpu_nvml_index(nvmlDevice_t device)
{
        unsigned int i;
        if (!real_nvml_index || real_nvml_index(device, &i) != 0 || i >= FGPU_MAX_DEVICES)
                return -1;
        return (int)i;
}

CUresult fgpu_charge(int d, uint64_t bytes)
{
        if (fgpu.config.closed || !fgpu.region || d < 0)
                return CUDA_ERROR_OUT_OF_MEMORY;
        if (fgpu_region_charge(fgpu.region, d, fgpu_memory_limit(d), bytes) < 0) {
                fgpu_log("device %d: %llu bytes refused (%llu of %llu in use)", d, (unsigned long long)bytes,
                         (unsigned long long)fgpu_region_used(fgpu.region, d),
                         (unsigned long long)fgpu_memory_limit(d));
                return CUDA_ERROR_OUT_OF_MEMORY;
        }
        return CUDA_SUCCESS;
}

void fgpu_refund(int d, uint64_t bytes)
{
        if (fgpu.region && d >= 0)
                fgpu_region_refund(fgpu.region, d, bytes);
}

/* ---- the allocation table: open addressing, one lock ---- */

struct entry {
        uint64_t key; /* 0: empty */
        uint64_t size;
        int32_t dev;
        int32_t kind; /* 0 with key != 0: deleted */
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static size_t table_cap, table_used, table_live; /* used counts deleted slots too */

/* A fork while another thread holds the table's lock must not leave the
 * child a lock nobody will release. */
static void table_lock_take(void)
{
        pthread_mutex_lock(&table_lock);
}

static void table_lock_give(void)
{
        pthread_mutex_unlock(&table_lock);
}

__attribute__((constructor)) static void watch_forks(void)
{
        pthread_atfork(table_lock_take, table_lock_give, table_lock_give);
}

static size_t slot_of(uint64_t key, int kind, size_t cap)
{
        uint64_t h = (key ^ ((uint64_t)kind << 61)) * 0x9E3779B97F4A7C15ull;
        return (size_t)(h >> 17) & (cap - 1);
}

/* Rehash without the deleted slots, into a table twice as large only when
 * the live entries need it (an alloc/free loop leaves deleted slots only). */
static bool rehash(void)
{
        size_t cap = table_cap ? table_cap : 1024;
        while ((table_live + 1) * 4 > cap)
                cap *= 2;
        struct entry *t = calloc(cap, sizeof(*t));
        if (!t)
                return false;
        for (size_t i = 0; i < table_cap; i++) {
                struct entry *e = &table[i];
                if (!e->key || !e->kind)
                        continue;
                size_t j = slot_of(e->key, e->kind, cap);
                while (t[j].key)
                        j = (j + 1) & (cap - 1);
                t[j] = *e;
        }
        free(table);
        table = t;
        table_cap = cap;
        table_used = 0;
        for (size_t i = 0; i < cap; i++)
                table_used += t[i].key != 0;
        return true;
}

void fgpu_alloc_add(enum fgpu_alloc_kind kind, uint64_t key, int dev, uint64_t size)
{
        if (!key)
                return;
        pthread_mutex_lock(&table_lock);
        if ((table_used + 1) * 2 > table_cap && !rehash()) {
                pthread_mutex_unlock(&table_lock);
                fgpu_log("out of memory for the allocation table: %llu bytes stay charged", (unsigned long long)size);
                return;
        }
        size_t i = slot_of(key, kind, table_cap), deleted = SIZE_MAX;
        while (table[i].key && !(table[i].key == key && table[i].kind == (int)kind)) {
                if (!table[i].kind && deleted == SIZE_MAX)
                        deleted = i;
                i = (i + 1) & (table_cap - 1);
        }
        if (!table[i].key) { /* a new entry: into the first deleted slot of the chain, if any */
                table_live++;
                if (deleted != SIZE_MAX)
                        i = deleted;
                else
                        table_used++;
        }
        table[i] = (struct entry){ .key = key, .size = size, .dev = dev, .kind = kind };
        pthread_mutex_unlock(&table_lock);
}

bool fgpu_alloc_remove(enum fgpu_alloc_kind kind, uint64_t key, int *dev, uint64_t *size)
{
        bool found = false;

        pthread_mutex_lock(&table_lock);
        if (table_cap && key) {
                size_t i = slot_of(key, kind, table_cap);
                while (table[i].key) {
                        if (table[i].key == key && table[i].kind == (int)kind) {
                                *dev = table[i].dev;
                                *size = table[i].size;
                                table[i].kind = 0; /* a tombstone keeps probe chains intact */
                                table_live--;
                                found = true;
                                break;
                        }
                        i = (i + 1) & (table_cap - 1);
                }
        }
        pthread_mutex_unlock(&table_lock);
        return found;
}
