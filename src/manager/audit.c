/* audit.c - see audit.h. */
#include "../common/compat.h"

#include "../common/crypto.h"
#include "../common/log.h"
#include "../common/timeutil.h"
#include "api.h"
#include "audit.h"
#include "db.h"
#include "http.h"
#include "manager.h"

void audit_record(struct manager *m, const struct api_ctx *c, unsigned status)
{
        struct tess_error *err = NULL;
        char id[UUID_STR_LEN];
        char action[128];

        uuid_generate_str(id);
        snprintf(action, sizeof(action), "%s %s", http_method(c->req), c->route->pattern);
        int r = DBQ(m->db,
                    "INSERT INTO audit_log(id, ts, access_key, user_id, remote_addr, method, path, action, target,"
                    " status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    NULL, &err, DB_TEXT(id), DB_INT(now_usec()), DB_TEXT(c->who.access_key),
                    DB_TEXT(c->who.user_id), DB_TEXT(http_remote_addr(c->req)), DB_TEXT(http_method(c->req)),
                    DB_TEXT(http_path(c->req)), DB_TEXT(action), DB_TEXT(c->audit_target[0] ? c->audit_target : NULL),
                    DB_INT(status));
        if (r < 0) {
                log_warn("writing audit log entry failed: %s, ignoring", err->msg);
                tess_error_free(err);
        }
}
