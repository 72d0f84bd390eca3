/* cmd_vfolder.c - `tessera vfolder ...`: virtual folders through the
 * /folders API (Backend.AI's vfolder routes): create, list, inspect,
 * rename, trash, restore and purge folders; list, make and transfer their
 * files (vfolder_xfer.c); invite, share and leave; usage. */
#include "common/compat.h"

#include "common/buf.h"
#include "cli/cli-internal.h"
#include "cli/client.h"
#include "cli/output.h"
#include "cli/vfolder_xfer.h"

#define CHUNK_DEFAULT ((int64_t)16 << 20)

static const struct cli_opt create_opts[] = {
        { "host", 0, OPT_STR, DEST_BODY, "host", 0, 0, "HOST", "storage host (default: the manager's default)" },
        { "usage-mode", 0, OPT_STR, DEST_BODY, "usage_mode", 0, 0, "MODE", "general (default), model or data" },
        { "permission", 'p', OPT_STR, DEST_BODY, "permission", 0, 0, "PERM",
          "project folders: what members get, ro, rw (default) or wd" },
        { "group", 'g', OPT_STR, DEST_BODY, "group", 0, 0, "PROJECT", "a project folder of this project (admins)" },
        {},
};

static const struct cli_opt ls_opts[] = {
        { "all", 'a', OPT_FLAG, DEST_QUERY, "all", 0, 0, NULL, "admins: every folder of the domain" },
        { "trash", 't', OPT_FLAG, DEST_LOCAL, "trash", 0, 0, NULL, "the folders in the trash" },
        {},
};

static const struct cli_opt rm_opts[] = {
        { "purge", 0, OPT_FLAG, DEST_LOCAL, "purge", 0, 0, NULL, "also purge it from the trash: files are gone" },
        {},
};

static const struct cli_opt mkdir_opts[] = {
        { "parents", 'p', OPT_FLAG, DEST_BODY, "parents", 0, 0, NULL, "make parent directories as needed" },
        { "exist-ok", 0, OPT_FLAG, DEST_BODY, "exist_ok", 0, 0, NULL, "no error if it exists" },
        {},
};

static const struct cli_opt upload_opts[] = {
        { "dest", 'd', OPT_STR, DEST_LOCAL, "dest", 0, 0, "DIR", "directory of the folder to put them in (default: its root)" },
        { "force", 'f', OPT_FLAG, DEST_LOCAL, "force", 0, 0, NULL,
          "send files the folder already has with the same size too" },
        { "chunk-size", 0, OPT_INT, DEST_LOCAL, "chunk", 0, 0, "BYTES", "bytes per request (default 16 MiB)" },
        {},
};

static const struct cli_opt download_opts[] = {
        { "output", 'o', OPT_STR, DEST_LOCAL, "output", 0, 0, "PATH",
          "where to write it (default: its name here; a directory becomes NAME.tar)" },
        {},
};

static const struct cli_opt invite_opts[] = {
        { "perm", 'p', OPT_STR, DEST_BODY, "perm", 0, 0, "PERM", "ro (default), rw or wd" },
        {},
};

static const struct cli_opt share_opts[] = {
        { "permission", 'p', OPT_STR, DEST_BODY, "permission", 0, 0, "PERM", "ro, rw or wd (required)" },
        {},
};

static const struct column folder_columns[] = {
        { "NAME", "name", COL_TEXT },         { "ID", "id", COL_SHORTID },     { "HOST", "host", COL_TEXT },
        { "TYPE", "type", COL_TEXT },         { "PERM", "permission", COL_TEXT }, { "MODE", "usage_mode", COL_TEXT },
        { "STATUS", "status", COL_TEXT },     {},
};

static const struct column file_columns[] = {
        { "NAME", "name", COL_TEXT }, { "TYPE", "type", COL_TEXT }, { "SIZE", "size", COL_TEXT },
        { "MODIFIED", "modified", COL_TEXT }, {},
};

static const struct column invitation_columns[] = {
        { "ID", "id", COL_TEXT },           { "FOLDER", "vfolder_name", COL_TEXT }, { "FROM", "inviter", COL_TEXT },
        { "PERM", "perm", COL_TEXT },       { "STATE", "state", COL_TEXT },         {},
};

static void print_table_of(const json_t *answer, const void *arg)
{
        const struct column *cols = arg;
        const json_t *items = json_is_array(answer) ? answer : json_object_get(answer, "items");

        if (!items)
                items = json_object_get(answer, "invitations");
        out_table(cols, items);
}

static void print_done(const json_t *answer UNUSED, const void *what)
{
        if (what)
                printf("%s\n", (const char *)what);
}

/* The positional strings from `from` on as a JSON list. */
static json_t *pos_list(const struct cli_args *a, int from)
{
        json_t *l = json_array();
        for (int i = from; i < a->npos; i++)
                json_array_append_new(l, json_string(a->pos[i]));
        return l;
}

static int vf_create(struct cli_call *call)
{
        struct cli_args *a = &call->args;

        json_object_set_new(a->body, "name", json_string(a->pos[0]));
        return cli_request("POST", "/folders", a->body, out_print_object, NULL);
}

static int vf_ls(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_(buf_release) struct buf path = BUF_INIT;

        if (cli_local_flag(a, "trash"))
                json_object_set_new(a->query, "status", json_string("delete-pending"));
        buf_puts(&path, "/folders");
        client_query(&path, a->query);
        return cli_request("GET", path.data, NULL, print_table_of, folder_columns);
}

static int vf_info(struct cli_call *call)
{
        _cleanup_free_ char *path = vfolder_path(call->args.pos[0], "");
        return cli_request("GET", path, NULL, out_print_object, NULL);
}

static int vf_rm(struct cli_call *call)
{
        int ret = CLI_EXIT_OK;

        for (int i = 0; i < call->args.npos; i++) {
                _cleanup_free_ char *path = vfolder_path(call->args.pos[i], "");
                _cleanup_free_ char *purge = vfolder_path(call->args.pos[i], "/purge");
                _cleanup_free_ char *msg = xasprintf("folder '%s' %s", call->args.pos[i],
                                                     cli_local_flag(&call->args, "purge") ? "purged" : "moved to the trash");
                if (cli_request("DELETE", path, NULL, print_done, cli_local_flag(&call->args, "purge") ? NULL : msg) !=
                    CLI_EXIT_OK)
                        ret = CLI_EXIT_ERROR;
                else if (cli_local_flag(&call->args, "purge") &&
                         cli_request("POST", purge, NULL, print_done, msg) != CLI_EXIT_OK)
                        ret = CLI_EXIT_ERROR;
        }
        return ret;
}

static int vf_restore(struct cli_call *call)
{
        _cleanup_free_ char *path = vfolder_path(call->args.pos[0], "/restore");
        return cli_request("POST", path, NULL, out_print_object, NULL);
}

static int vf_purge(struct cli_call *call)
{
        _cleanup_free_ char *path = vfolder_path(call->args.pos[0], "/purge");
        _cleanup_free_ char *msg = xasprintf("folder '%s' purged", call->args.pos[0]);
        return cli_request("POST", path, NULL, print_done, msg);
}

static int vf_rename(struct cli_call *call)
{
        _cleanup_free_ char *path = vfolder_path(call->args.pos[0], "/rename");
        json_t *body = json_pack("{s:s}", "new_name", call->args.pos[1]);
        int r = cli_request("POST", path, body, out_print_object, NULL);
        json_decref(body);
        return r;
}

static int vf_ls_files(struct cli_call *call)
{
        _cleanup_free_ char *base = vfolder_path(call->args.pos[0], "/files?path=");
        _cleanup_(buf_release) struct buf path = BUF_INIT;

        buf_puts(&path, base);
        buf_percent_encode(&path, call->args.npos > 1 ? call->args.pos[1] : "");
        return cli_request("GET", path.data, NULL, print_table_of, file_columns);
}

static int vf_mkdir(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *path = vfolder_path(a->pos[0], "/mkdir");
        _cleanup_free_ char *msg = xasprintf("made '%s' in folder '%s'", a->pos[1], a->pos[0]);

        json_object_set_new(a->body, "path", json_string(a->pos[1]));
        return cli_request("POST", path, a->body, print_done, msg);
}

static int vf_rm_files(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *path = vfolder_path(a->pos[0], "/delete-files");
        _cleanup_free_ char *msg = xasprintf("deleted %d path%s", a->npos - 1, a->npos == 2 ? "" : "s");

        json_object_set_new(a->body, "files", pos_list(a, 1));
        return cli_request("DELETE", path, a->body, print_done, msg);
}

static int vf_upload(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        struct tess_error *err = NULL;
        long long chunk = cli_local_int(a, "chunk", CHUNK_DEFAULT);
        const char *dest = cli_local_str(a, "dest");

        if (chunk < 1024)
                return cli_usage_error(call->prefix, "--chunk-size must be at least 1024 bytes");
        if (vfx_upload(a->pos[0], (const char *const *)a->pos + 1, a->npos - 1, dest ? dest : "",
                       cli_local_flag(a, "force"), chunk, &err) < 0)
                return cli_fail(err);
        return CLI_EXIT_OK;
}

static int vf_download(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        struct tess_error *err = NULL;

        if (vfx_download(a->pos[0], a->pos[1], cli_local_str(a, "output"), &err) < 0)
                return cli_fail(err);
        return CLI_EXIT_OK;
}

static int vf_invite(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *path = vfolder_path(a->pos[0], "/invite");

        if (!json_object_get(a->body, "perm"))
                json_object_set_new(a->body, "perm", json_string("ro"));
        json_object_set_new(a->body, "emails", pos_list(a, 1));
        return cli_request("POST", path, a->body, out_print_object, NULL);
}

static int vf_invitations(struct cli_call *call UNUSED)
{
        return cli_request("GET", "/folders/invitations/list", NULL, print_table_of, invitation_columns);
}

static int invitation_answer(struct cli_call *call, const char *method, const char *path, const char *what)
{
        json_t *body = json_pack("{s:s}", "inv_id", call->args.pos[0]);
        _cleanup_free_ char *msg = xasprintf("invitation %s %s", call->args.pos[0], what);
        int r = cli_request(method, path, body, print_done, msg);
        json_decref(body);
        return r;
}

static int vf_accept(struct cli_call *call)
{
        return invitation_answer(call, "POST", "/folders/invitations/accept", "accepted");
}

static int vf_reject(struct cli_call *call)
{
        return invitation_answer(call, "DELETE", "/folders/invitations/delete", "rejected");
}

static int vf_share(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *path = vfolder_path(a->pos[0], "/share");

        if (!json_object_get(a->body, "permission"))
                return cli_usage_error(call->prefix, "--permission is required");
        json_object_set_new(a->body, "emails", pos_list(a, 1));
        return cli_request("POST", path, a->body, out_print_object, NULL);
}

static int vf_unshare(struct cli_call *call)
{
        struct cli_args *a = &call->args;
        _cleanup_free_ char *path = vfolder_path(a->pos[0], "/unshare");

        json_object_set_new(a->body, "emails", pos_list(a, 1));
        return cli_request("DELETE", path, a->body, out_print_object, NULL);
}

static int vf_leave(struct cli_call *call)
{
        _cleanup_free_ char *path = vfolder_path(call->args.pos[0], "/leave");
        _cleanup_free_ char *msg = xasprintf("left folder '%s'", call->args.pos[0]);
        return cli_request("POST", path, NULL, print_done, msg);
}

static int vf_usage(struct cli_call *call)
{
        _cleanup_(buf_release) struct buf path = BUF_INIT;

        buf_puts(&path, "/folders/_/usage?folder_name=");
        buf_percent_encode(&path, call->args.pos[0]);
        return cli_request("GET", path.data, NULL, out_print_object, NULL);
}

static int vf_hosts(struct cli_call *call UNUSED)
{
        return cli_request("GET", "/folders/_/hosts", NULL, out_print_object, NULL);
}

/* clang-format off */
static const struct cli_leaf vfolder_leaves[] = {
        { "create", NULL, vf_create, { create_opts }, 0, 1, 1, "NAME", "create a folder (a name starting with '.' is mounted in every session of yours)" },
        { "ls", "list", vf_ls, { ls_opts }, 0, 0, 0, NULL, "list the folders you may use" },
        { "info", "show", vf_info, { NULL }, 0, 1, 1, "NAME", "show a folder, with its usage" },
        { "rm", "delete", vf_rm, { rm_opts }, 0, 1, -1, "NAME...", "move folders to the trash" },
        { "restore", NULL, vf_restore, { NULL }, 0, 1, 1, "NAME", "take a folder out of the trash" },
        { "purge", NULL, vf_purge, { NULL }, 0, 1, 1, "NAME", "delete a trashed folder and its files for good" },
        { "rename", NULL, vf_rename, { NULL }, 0, 2, 2, "NAME NEW_NAME", "rename a folder" },
        { "ls-files", NULL, vf_ls_files, { NULL }, 0, 1, 2, "NAME [PATH]", "list a directory of a folder" },
        { "mkdir", NULL, vf_mkdir, { mkdir_opts }, 0, 2, 2, "NAME PATH", "make a directory in a folder" },
        { "rm-files", NULL, vf_rm_files, { NULL }, 0, 2, -1, "NAME PATH...", "delete files or directories of a folder (wd)" },
        { "upload", NULL, vf_upload, { upload_opts }, 0, 2, -1, "NAME LOCAL...", "upload files and directories; re-run to resume" },
        { "download", NULL, vf_download, { download_opts }, 0, 2, 2, "NAME PATH", "download a file (resumable) or a directory (tar)" },
        { "invite", NULL, vf_invite, { invite_opts }, 0, 2, -1, "NAME EMAIL...", "invite users to your folder" },
        { "invitations", NULL, vf_invitations, { NULL }, 0, 0, 0, NULL, "list invitations to you" },
        { "accept", NULL, vf_accept, { NULL }, 0, 1, 1, "INVITATION_ID", "accept an invitation" },
        { "reject", NULL, vf_reject, { NULL }, 0, 1, 1, "INVITATION_ID", "reject (or, as its sender, cancel) an invitation" },
        { "share", NULL, vf_share, { share_opts }, 0, 2, -1, "NAME EMAIL...", "give project members a permission of their own" },
        { "unshare", NULL, vf_unshare, { NULL }, 0, 2, -1, "NAME EMAIL...", "take access away (invitees) or the own permission (members)" },
        { "leave", NULL, vf_leave, { NULL }, 0, 1, 1, "NAME", "stop using a folder shared with you" },
        { "usage", NULL, vf_usage, { NULL }, 0, 1, 1, "NAME", "bytes and files of a folder" },
        { "hosts", NULL, vf_hosts, { NULL }, 0, 0, 0, NULL, "storage hosts you may use" },
        {},
};
/* clang-format on */

int cmd_vfolder(int argc, char **argv)
{
        return cli_run_group("tessera vfolder", "Virtual folders: storage that follows you into every session.",
                             vfolder_leaves, argc, argv);
}
