/* admin_image_aliases.c - /admin/image-aliases: short names for registered
 * images ("python" -> "registry.local/stable/python:3.11"), which session
 * create resolves before names and tags (api_session.c).  An alias goes
 * when its image goes (ON DELETE CASCADE). */
#include "common/compat.h"

#include <ctype.h>

#include "manager/admin/admin-internal.h"

/* Letters, digits, '.', '_', '-', '/', ':'; starting with a letter or digit. */
static bool alias_ok(const char *s)
{
        if (!isalnum((unsigned char)*s))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && !strchr("._-/:", *s))
                        return false;
        return true;
}

static const struct field alias_fields[] = {
        { "alias", "alias", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 256, .valid = alias_ok,
          .hint = "must be letters, digits, '.', '_', '-', '/' or ':', starting with a letter or digit" },
        { "image_id", "image_id", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 64,
          .ref = "SELECT 1 FROM images WHERE id = ?" },
        { "image", NULL, FT_TEXT, FF_RO, .expr = "i.name || ':' || i.tag" },
        { "architecture", NULL, FT_TEXT, FF_RO, .expr = "i.architecture" },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

static const struct filter alias_filters[] = {
        { "image_id", " AND a.image_id = ?" },
        {},
};

const struct entity admin_image_aliases = {
        .path = "/admin/image-aliases",
        .noun = "image alias",
        .table = "image_aliases",
        .alias = "a",
        .from = "image_aliases a JOIN images i ON i.id = a.image_id",
        .pk = "alias",
        .key = "alias",
        .label = "alias",
        .order = "a.alias",
        .fields = alias_fields,
        .filters = alias_filters,
        .create_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .created_at = true,
};
