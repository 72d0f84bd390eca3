/* api_vfolder_share.c - sharing (stub: being written) */
#include "../common/compat.h"

#include "api_vfolder.h"
#include "vfolder.h"

void api_vfolder_invite(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_invitations(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_invitation_accept(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_invitation_delete(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_share(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_unshare(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}

void api_vfolder_leave(struct api_ctx *c)
{
        api_problem(c, 501, "not-implemented", "not implemented yet");
}
