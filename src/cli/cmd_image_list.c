/* cmd_image_list.c - `tessera image ls`: the images the caller may start
 * sessions from (GET /images), one line per name with its tags and
 * aliases; --json prints the manager's answer. */
#include "common/compat.h"

#include "cli/cli-internal.h"
#include "cli/output.h"

static const struct column image_ls_columns[] = {
        { "NAME", "name", COL_TEXT },
        { "TAGS", "tags", COL_TEXT },
        { "ALIASES", "aliases", COL_TEXT },
        {},
};

/* {"images": [{name, versions: [{tag, ...}], aliases}]} -> a table. */
static void print_images(const json_t *answer, const void *arg UNUSED)
{
        json_t *rows = json_array(), *group;
        size_t i, j;

        json_array_foreach(json_object_get(answer, "images"), i, group) {
                json_t *tags = json_array(), *v;
                json_array_foreach(json_object_get(group, "versions"), j, v) {
                        json_t *tag = json_object_get(v, "tag");
                        bool seen = false; /* one tag per line even with several architectures */
                        for (size_t k = 0; k < json_array_size(tags); k++)
                                seen |= json_equal(json_array_get(tags, k), tag);
                        if (!seen)
                                json_array_append(tags, tag);
                }
                json_array_append_new(rows, json_pack("{s:O, s:o, s:O}", "name", json_object_get(group, "name"), "tags",
                                                      tags, "aliases", json_object_get(group, "aliases")));
        }
        out_table(image_ls_columns, rows);
        json_decref(rows);
}

int image_list_cmd(struct cli_call *call UNUSED)
{
        return cli_request("GET", "/images", NULL, print_images, NULL);
}
