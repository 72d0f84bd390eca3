/* vfolder_quota.c - usage and quotas (stub: being written) */
#include "../common/compat.h"

#include "api_vfolder.h"
#include "vfolder.h"

void api_vfolder_usage(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_quota(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

int vf_usage_of(const struct vfolder *f, struct vf_usage *ret, struct tess_error **err)
{
        (void)f;
        (void)err;
        *ret = (struct vf_usage){ 0 };
        return 0;
}

int vf_quota_prepare(struct manager *m, const struct vfolder *f, struct tess_error **err)
{
        (void)m;
        (void)f;
        (void)err;
        return 0;
}

int vf_quota_check(struct manager *m, const struct vfolder *f, int64_t add_bytes, struct tess_error **err)
{
        (void)m;
        (void)f;
        (void)add_bytes;
        (void)err;
        return 0;
}
