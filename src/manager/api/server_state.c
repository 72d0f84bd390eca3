/* server_state.c - the announcement and the frozen state, as rows of
 * manager_settings (key, value). */
#include "common/compat.h"

#include <jansson.h>

#include "common/log.h"
#include "common/timeutil.h"
#include "manager/api/server_state.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"

#define FROZEN_RECHECK_USEC 1000000

static int setting_get(struct manager *m, const char *key, char **value, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        if (DBQ(m->db, "SELECT value FROM manager_settings WHERE key = ?", &rows, err, DB_TEXT(key)) < 0)
                return -1;
        *value = rows->nrows ? xstrdup(db_get(rows, 0, 0)) : NULL;
        return 0;
}

static int setting_put(struct manager *m, const char *key, const char *value, struct tess_error **err)
{
        return DBQ(m->db,
                   "INSERT INTO manager_settings(key, value, updated_at) VALUES (?, ?, ?)"
                   " ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                   NULL, err, DB_TEXT(key), DB_TEXT(value), DB_INT(now_usec()));
}

int server_announcement_get(struct manager *m, bool *enabled, char **message, struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        if (setting_get(m, "announcement", &text, err) < 0)
                return -1;
        json_t *j = text ? json_loads(text, 0, NULL) : NULL;
        const char *msg = json_string_value(json_object_get(j, "message"));
        *enabled = json_is_true(json_object_get(j, "enabled")) && msg && *msg;
        *message = xstrdup(*enabled ? msg : "");
        json_decref(j);
        return 0;
}

int server_announcement_set(struct manager *m, bool enabled, const char *message, struct tess_error **err)
{
        json_t *j = json_pack("{s:b, s:s}", "enabled", enabled, "message", enabled && message ? message : "");
        _cleanup_free_ char *text = json_dumps(j, JSON_COMPACT);
        json_decref(j);
        return setting_put(m, "announcement", text, err);
}

bool server_frozen(struct manager *m)
{
        int64_t now = monotonic_usec();
        if (m->server_state.checked_at && now - m->server_state.checked_at < FROZEN_RECHECK_USEC)
                return m->server_state.frozen;
        _cleanup_free_ char *value = NULL;
        struct tess_error *err = NULL;
        m->server_state.checked_at = now; /* a failing database is asked (and logged) once a second */
        if (setting_get(m, "status", &value, &err) < 0) {
                log_warn("reading the service's frozen state: %s", err->msg);
                tess_error_free(err);
                return m->server_state.frozen; /* as last known */
        }
        m->server_state.frozen = value && streq(value, "frozen");
        return m->server_state.frozen;
}

int server_set_frozen(struct manager *m, bool frozen, struct tess_error **err)
{
        if (setting_put(m, "status", frozen ? "frozen" : "running", err) < 0)
                return -1;
        m->server_state.frozen = frozen;
        m->server_state.checked_at = monotonic_usec();
        return 0;
}
