/* dotfiles.c - see dotfiles.h: what a dotfile's path and permission may
 * be, and a user's dotfiles read. */
#include "common/compat.h"

#include "common/beneath.h"
#include "manager/accounts/dotfiles.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

/* Directories the images and their apps keep: a file there would hide
 * them (Backend.AI refuses the same names). */
static const char *const reserved[] = { ".ssh", ".ssh/authorized_keys", ".jupyter", ".terminfo", ".local", ".config",
                                        NULL };

/* The path relative to the home directory: an absolute one must be in it. */
static int relative_to_home(const char *path, const char **ret, struct tess_error **err)
{
        size_t n = strlen(DOTFILE_HOME);

        if (path[0] != '/') {
                *ret = path;
                return 0;
        }
        if (strncmp(path, DOTFILE_HOME, n) != 0 || (path[n] != '/' && path[n] != '\0'))
                return tess_err(err, EINVAL,
                                "'path': '%.64s' is outside the home directory (give a path relative to it, or "
                                "under " DOTFILE_HOME ")",
                                path);
        *ret = path + n;
        return 0;
}

int dotfile_path(const char *path, char **ret, struct tess_error **err)
{
        _cleanup_free_ char *clean = NULL;
        const char *rel = NULL;

        if (strlen(path) > DOTFILE_PATH_MAX + sizeof(DOTFILE_HOME))
                return tess_err(err, EINVAL, "'path' is longer than %d bytes", DOTFILE_PATH_MAX);
        if (relative_to_home(path, &rel, err) < 0 || beneath_user_path(rel, &clean, err) < 0)
                return -EINVAL;
        if (!*clean)
                return tess_err(err, EINVAL, "'path': '%.64s' is the home directory itself, not a file", path);
        if (strlen(clean) > DOTFILE_PATH_MAX)
                return tess_err(err, EINVAL, "'path' is longer than %d bytes", DOTFILE_PATH_MAX);
        for (const char *const *r = reserved; *r; r++)
                if (streq(clean, *r))
                        return tess_err(err, EINVAL, "'path': '%s' is reserved (the images keep it)", *r);
        *ret = TAKE_PTR(clean);
        return 0;
}

bool dotfile_permission_valid(const char *perm)
{
        return strlen(perm) == 3 && strspn(perm, "01234567") == 3;
}

static int by_path(const void *a, const void *b)
{
        return strcmp(json_string_value(json_object_get(*(json_t *const *)a, "path")),
                      json_string_value(json_object_get(*(json_t *const *)b, "path")));
}

/* By path, byte by byte: the same order on both databases (PostgreSQL's
 * ORDER BY follows its locale). */
int dotfiles_list(struct manager *m, const char *user_id, json_t **ret, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db, "SELECT path, permission, data FROM user_dotfiles WHERE user_id = ?", &rows, err,
                    DB_TEXT(user_id));

        if (r < 0)
                return r;
        json_t **v = xcalloc((size_t)rows->nrows + 1, sizeof(*v));
        for (int i = 0; i < rows->nrows; i++)
                v[i] = json_pack("{s:s, s:s, s:s}", "path", db_get(rows, i, 0), "permission", db_get(rows, i, 1),
                                 "data", db_get(rows, i, 2));
        qsort(v, (size_t)rows->nrows, sizeof(*v), by_path);
        json_t *list = json_array();
        for (int i = 0; i < rows->nrows; i++)
                json_array_append_new(list, v[i]);
        free(v);
        *ret = list;
        return 0;
}
