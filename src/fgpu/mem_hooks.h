/* mem_hooks.h - the memory wrappers' real functions (mem_hooks.c), for
 * the symbol table, and the limited view of a device's memory. */
#ifndef TESS_FGPU_MEM_HOOKS_H
#define TESS_FGPU_MEM_HOOKS_H

#include "fgpu/hook.h"

/* free/total/used of device d as the container sees it (callers: only
 * with the hook active), from the driver's real figures: its limit and
 * the live processes' charges, or nothing free when the configuration is
 * closed.  false: the driver's figures stand (no limit on d). */
bool fgpu_seen_memory(int d, uint64_t real_free, uint64_t real_total, uint64_t *free, uint64_t *total,
                      uint64_t *used);

#endif
