/* devices.c - what this node offers: CPU cores (the agent's allowed cpuset
 * minus `reserved_cpu`), memory (MemTotal minus `reserved_mem`) and GPUs.
 *
 * GPUs come from one plugin (`gpu_plugin`): `cuda`, NVIDIA's GPUs through
 * NVML (gpu_nvml.c; no driver is no GPUs, not an error), or `mock`,
 * `mock_gpus` fake devices with the configured memory, SM count and model,
 * clearly named as mock in every report; `auto` is mock when mock_gpus is
 * set, else cuda.  Each GPU is worth `fgpu_per_gpu` of cuda.shares (the
 * fractional slot), or one cuda.device when fgpu_per_gpu is 0. */
#include "common/compat.h"

#include <sched.h>

#include "common/fs.h"
#include "common/slots.h"
#include "agent/agent.h"
#include "agent/gpu.h"

static uint64_t mem_total(void)
{
        char *text = NULL;
        size_t len;
        unsigned long long kib = 0;

        if (fs_read_file("/proc/meminfo", 1 << 16, &text, &len, NULL) < 0)
                return 0;
        const char *p = strstr(text, "MemTotal:");
        if (p)
                sscanf(p, "MemTotal: %llu kB", &kib);
        free(text);
        return (uint64_t)kib * 1024;
}

static void mock_gpus(const struct agent_conf *conf, struct agent_devices *d)
{
        d->ngpu = conf->mock_gpus;
        d->gpu = d->ngpu ? xcalloc(d->ngpu, sizeof(*d->gpu)) : NULL;
        for (size_t i = 0; i < d->ngpu; i++) {
                struct gpu_info *g = &d->gpu[i];
                g->index = g->minor = (int)i;
                g->memory = conf->mock_gpu_memory;
                g->sm = (unsigned)conf->mock_gpu_sm;
                snprintf(g->model, sizeof(g->model), "%s", conf->mock_gpu_model);
                snprintf(g->uuid, sizeof(g->uuid), "mock%zu", i);
        }
}

static json_t *gpus_json(const struct agent_devices *d, const char *slot, int64_t capacity)
{
        json_t *gpus = json_array();
        char cap[48], mem[48];

        slot_format(slot, capacity, cap, sizeof(cap));
        for (size_t i = 0; i < d->ngpu; i++) {
                const struct gpu_info *g = &d->gpu[i];
                snprintf(mem, sizeof(mem), "%llu", (unsigned long long)g->memory);
                json_array_append_new(gpus, json_pack("{s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:i}", "id", g->uuid,
                                                      "slot", slot, "capacity", cap, "model", g->model, "memory", mem,
                                                      "sm", (json_int_t)g->sm, "plugin", d->gpu_plugin, "index",
                                                      g->index));
        }
        return gpus;
}

static int probe_gpus(const struct agent_conf *conf, struct agent_devices *d, struct tess_error **err)
{
        const char *plugin = conf->gpu_plugin;

        if (streq(plugin, "auto"))
                plugin = conf->mock_gpus > 0 ? "mock" : "cuda";
        if (streq(plugin, "mock")) {
                d->gpu_plugin = "mock";
                mock_gpus(conf, d);
        } else if (streq(plugin, "cuda")) {
                d->gpu_plugin = "cuda";
                gpu_nvml_probe(conf->nvml_library, &d->gpu, &d->ngpu);
        } else if (streq(plugin, "none")) {
                d->gpu_plugin = "none";
        } else {
                return tess_err(err, EINVAL, "gpu_plugin must be auto, cuda, mock or none, not '%s'", plugin);
        }
        return 0;
}

int agent_devices_probe(const struct agent_conf *conf, struct agent_devices *ret, struct tess_error **err)
{
        cpu_set_t set;
        int64_t fgpu = 0;
        char text[48];

        *ret = (struct agent_devices){ 0 };
        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                return tess_err(err, errno, "reading the allowed CPUs: %s", strerror(errno));
        for (int c = 0; c < CPU_SETSIZE && ret->ncores < (int)ARRAY_SIZE(ret->cores); c++)
                if (CPU_ISSET(c, &set))
                        ret->cores[ret->ncores++] = c;
        if ((uint64_t)ret->ncores <= conf->reserved_cpu)
                return tess_err(err, EINVAL, "reserved_cpu = %llu leaves none of the %d CPUs to offer",
                                (unsigned long long)conf->reserved_cpu, ret->ncores);
        ret->ncores -= (int)conf->reserved_cpu; /* the highest-numbered are kept for the host */
        uint64_t total = mem_total();
        if (total <= conf->reserved_mem)
                return tess_err(err, EINVAL, "reserved_mem leaves no memory to offer (%llu bytes in all)",
                                (unsigned long long)total);
        ret->mem = total - conf->reserved_mem;
        if (slot_parse_string("cuda.shares", conf->fgpu_per_gpu, &fgpu, err) < 0)
                return tess_err_wrap(err, "fgpu_per_gpu");
        const char *gpu_slot = fgpu > 0 ? "cuda.shares" : "cuda.device";
        int64_t capacity = fgpu;
        if (fgpu == 0 && slot_parse_string("cuda.device", "1", &capacity, err) < 0)
                return -EINVAL;
        if (probe_gpus(conf, ret, err) < 0)
                return -EINVAL;
        ret->gpu_slot = gpu_slot;
        ret->gpu_per_device = capacity;
        ret->gpus = gpus_json(ret, gpu_slot, capacity);
        ret->slots = json_object();
        snprintf(text, sizeof(text), "%d", ret->ncores);
        json_object_set_new(ret->slots, "cpu", json_string(text));
        snprintf(text, sizeof(text), "%llu", (unsigned long long)ret->mem);
        json_object_set_new(ret->slots, "mem", json_string(text));
        if (ret->ngpu > 0) {
                slot_format(gpu_slot, capacity * (int64_t)ret->ngpu, text, sizeof(text));
                json_object_set_new(ret->slots, gpu_slot, json_string(text));
        }
        return 0;
}

void agent_devices_release(struct agent_devices *d)
{
        json_decref(d->gpus);
        json_decref(d->slots);
        free(d->gpu);
        *d = (struct agent_devices){ 0 };
}
