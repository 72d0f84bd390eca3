/* mem_hooks.h - the memory wrappers' real functions (mem_hooks.c), for
 * the symbol table, and the limited view of a device's memory. */
#ifndef TESS_FGPU_MEM_HOOKS_H
#define TESS_FGPU_MEM_HOOKS_H

#include "hook.h"

/* free/total/used of device d as the container sees it (limit set). */
void fgpu_limited_info(int d, uint64_t real_free, uint64_t *free, uint64_t *total, uint64_t *used);

#endif
