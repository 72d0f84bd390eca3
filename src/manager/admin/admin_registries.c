/* admin_registries.c - /admin/container-registries: the registries whose
 * catalogs the manager scans for images (superadmins only), and POST
 * /admin/container-registries/{name}/rescan, which starts a scan as a
 * background task (registry_rescan.h).
 *
 * A registry is named as image names start with it (host[:port]); its url
 * says how to reach it (http or https, no path); its project limits a scan
 * to the repositories under that prefix.  The password is write-only: it
 * is stored sealed under the master key and shown only as has_password.
 * Deleting a registry keeps its images. */
#include "common/compat.h"

#include "manager/admin/admin-internal.h"
#include "manager/core/manager.h"
#include "manager/images/registry_rescan.h"
#include "registry/registry.h"

/* Is s read back as the registry of "<s>/x" by Docker's grammar
 * (registry_ref.c): a host with a '.' or a port, or localhost? */
static bool registry_name_ok(const char *s)
{
        _cleanup_free_ char *ref = xasprintf("%s/x", s);
        struct image_ref r;
        bool ok;

        if (!*s || strpbrk(s, "/@[") || image_ref_parse(ref, NULL, &r, NULL) < 0)
                return false;
        ok = streq(r.registry, s);
        image_ref_release(&r);
        return ok;
}

/* "" or a repository path: components of Docker's grammar joined by '/'. */
static bool project_ok(const char *s)
{
        _cleanup_free_ char *ref = xasprintf("localhost/%s", s);
        struct image_ref r;

        if (!*s)
                return true;
        if (strpbrk(s, ":@") || image_ref_parse(ref, NULL, &r, NULL) < 0)
                return false;
        image_ref_release(&r);
        return true;
}

/* HTTP Basic has no room for ':' in a user name. */
static bool username_ok(const char *s)
{
        for (; *s; s++)
                if ((unsigned char)*s < 0x20 || *s == 0x7f || *s == ':')
                        return false;
        return true;
}

/* http:// or https://, then host[:port] and nothing but an optional '/'. */
static int url_check(const json_t *v, struct tess_error **err)
{
        const char *s = json_string_value(v), *host;

        if (strncmp(s, "https://", 8) == 0)
                host = s + 8;
        else if (strncmp(s, "http://", 7) == 0)
                host = s + 7;
        else
                return tess_err(err, EINVAL, "'url' must start with http:// or https://");
        size_t n = strcspn(host, "/?#");
        if (host[n] && !streq(host + n, "/"))
                return tess_err(
                        err, EINVAL,
                        "'url' may not have a path, query or fragment: the registry API is at /v2/ of its root");
        if (memchr(host, '@', n))
                return tess_err(err, EINVAL, "'url' may not hold credentials: give 'username' and 'password'");
        _cleanup_free_ char *hostport = xstrndup(host, n);
        /* a host without a '.' ("registry") is a registry name once it has a port */
        _cleanup_free_ char *as_name = strchr(hostport, ':') ? xstrdup(hostport) : xasprintf("%s:1", hostport);
        if (!registry_name_ok(as_name))
                return tess_err(err, EINVAL, "'url': '%s' is not a host[:port]", hostport);
        return 0;
}

static const struct field registry_fields[] = {
        { "name", "name", FT_TEXT, FF_CREATE | FF_REQUIRED, .max = 255, .valid = registry_name_ok,
          .hint = "must be a registry as image names start with it: HOST[:PORT] where HOST has a '.' or a port or is "
                  "localhost, e.g. registry.example.com or 127.0.0.1:5000 (no IPv6)" },
        { "url", "url", FT_TEXT, FF_REQUIRED, .max = 512, .check = url_check },
        { "project", "project", FT_TEXT, 0, .max = 255, .valid = project_ok,
          .hint = "must be '' or a repository path prefix like 'team' or 'team/stable' (lowercase letters, digits, "
                  "'.', '_', '-'; components separated by '/')" },
        { "username", "username", FT_TEXT, 0, .max = 255, .valid = username_ok,
          .hint = "must be printable characters without ':'" },
        { "password", NULL, FT_TEXT, FF_WO | FF_VIRTUAL | FF_NULL, .max = 1024 },
        { "has_password", NULL, FT_BOOL, FF_RO, .expr = "(r.password_sealed <> '')" },
        { "images", NULL, FT_INT, FF_RO, .expr = "(SELECT COUNT(*) FROM images i WHERE i.registry = r.name)" },
        { "last_scan_at", "last_scan_at", FT_TIME, FF_RO },
        { "created_at", "created_at", FT_TIME, FF_RO },
        {},
};

/* A delete waits for the rescan of the registry to end. */
static int registry_check_write(struct api_ctx *c UNUSED, const struct db_rows *rows, int row,
                                const struct admin_values *v, struct tess_error **err)
{
        const char *name = rows ? admin_row_get(&admin_registries, rows, row, "name") : NULL;

        if (!v && name && registry_rescan_running(name))
                return tess_err(err, EEXIST, "container registry '%s' is being rescanned; try again when it ends",
                                name);
        return 0;
}

/* The password, sealed (or cleared by "" or null). */
static int registry_after_write(struct api_ctx *c, const char *pk, const struct admin_values *v,
                                struct tess_error **err)
{
        const char *password = admin_value_text(v, "password");

        if (!admin_value_given(v, "password"))
                return 0;
        _cleanup_free_ char *sealed = password && *password ? secret_seal(c->m->master_key, password) : xstrdup("");
        int r = DBQ(c->m->db, "UPDATE container_registries SET password_sealed = ? WHERE name = ?", NULL, err,
                    DB_TEXT(sealed), DB_TEXT(pk));
        return r < 0 ? r : 0;
}

const struct entity admin_registries = {
        .path = "/admin/container-registries",
        .noun = "container registry",
        .table = "container_registries",
        .alias = "r",
        .pk = "name",
        .key = "name",
        .label = "name",
        .order = "r.name",
        .fields = registry_fields,
        .create_roles = ROLES_SUPER,
        .update_roles = ROLES_SUPER,
        .delete_roles = ROLES_SUPER,
        .created_at = true,
        .check_write = registry_check_write,
        .after_write = registry_after_write,
};

void admin_registry_rescan(struct api_ctx *c)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        struct tess_error *err = NULL;
        char task_id[UUID_STR_LEN];

        if (admin_find(c, &admin_registries, c->param[0], &rows, &err) < 0)
                return api_fail(c, err);
        admin_audit_target(c, &admin_registries, c->param[0]);
        if (c->body && json_object_size(c->body) > 0)
                return api_problem(c, 400, "invalid-api-params", "a rescan takes no parameters");
        if (registry_rescan_start(c->m, c->param[0], c->who.user_id, c->who.domain, task_id, &err) < 0)
                return api_fail(c, err);
        api_json(c, 202, json_pack("{s:s}", "task_id", task_id));
}
