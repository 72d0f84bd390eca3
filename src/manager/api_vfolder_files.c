/* api_vfolder_files.c - files inside a folder (stub: being written) */
#include "../common/compat.h"

#include "api_vfolder.h"
#include "vfolder.h"

void api_vfolder_files(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_mkdir(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_rename_file(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_move_file(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_delete_files(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}
