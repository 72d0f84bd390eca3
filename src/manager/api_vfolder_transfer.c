/* api_vfolder_transfer.c - uploads and downloads (stub: being written) */
#include "../common/compat.h"

#include "api_vfolder.h"
#include "vfolder.h"

void api_vfolder_request_upload(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_request_download(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_tus_options(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_tus_create(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_tus_head(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_tus_patch(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_download(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}
