/* cmd_image_push.c - `tessera image push LAYOUT REF`: push an OCI image
 * layout (`tessera image build`'s, or any with one image) to a registry
 * over the OCI distribution API (image_push.h).  Credentials come from
 * TESSERA_REGISTRY_USER and TESSERA_REGISTRY_PASSWORD. */
#include "common/compat.h"

#include <jansson.h>

#include "cli/cli-internal.h"
#include "cli/output.h"
#include "registry/image_push.h"

#define INSECURE_MAX 16

int image_push_cmd(struct cli_call *call)
{
        const json_t *list = json_object_get(call->args.local, "insecure");
        const char *insecure[INSECURE_MAX + 1] = { 0 };
        struct image_push_result res;
        struct tess_error *err = NULL;
        size_t i;
        json_t *v;

        if (json_array_size(list) > INSECURE_MAX)
                return cli_usage_error(call->prefix, "at most %d --insecure registries", INSECURE_MAX);
        json_array_foreach(list, i, v)
                insecure[i] = json_string_value(v);
        if (image_push(call->args.pos[0], call->args.pos[1],
                       &(struct image_push_opts){ .insecure = insecure, .verbose = !arg_json }, &res, &err) < 0)
                return cli_fail(err);
        if (arg_json) {
                json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I}", "reference", call->args.pos[1], "manifest",
                                      res.manifest, "blobs", (json_int_t)res.blobs, "sent", (json_int_t)res.sent,
                                      "bytes_sent", (json_int_t)res.bytes_sent);
                out_json(o);
                json_decref(o);
        } else {
                printf("pushed %s (%s; %zu of %zu blobs sent, %.1f MiB)\n", call->args.pos[1], res.manifest, res.sent,
                       res.blobs, res.bytes_sent / 1048576.0);
        }
        return CLI_EXIT_OK;
}

const struct cli_opt image_push_opts[] = {
        { "insecure", 0, OPT_LIST, DEST_LOCAL, "insecure", 0, 0, "HOST:PORT",
          "reach this registry over http (loopback ones always are)" },
        {},
};
