/* session_apps.c - the apps a session's image declares (session_apps.h). */
#include "common/compat.h"

#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/sessions/session_apps.h"

int session_app_facts(struct manager *m, const char *session, json_t **ret_labels, char **ret_wsproxy,
                      char *ret_user, size_t user_len, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r = DBQ(m->db,
                    "SELECT i.labels, g.wsproxy_addr, s.user_id FROM sessions s"
                    " LEFT JOIN images i ON i.name || ':' || i.tag = s.image AND i.architecture = s.architecture"
                    " LEFT JOIN resource_groups g ON g.name = s.resource_group WHERE s.id = ?",
                    &rows, err, DB_TEXT(session));

        if (r < 0)
                return r;
        if (rows->nrows == 0)
                return tess_err(err, ENOENT, "session %s is gone", session);
        const char *labels = db_getn(rows, 0, "labels"), *ws = db_getn(rows, 0, "wsproxy_addr");
        *ret_labels = labels ? json_loads(labels, 0, NULL) : NULL;
        *ret_wsproxy = ws && *ws ? xstrdup(ws) : NULL;
        snprintf(ret_user, user_len, "%s", db_getn(rows, 0, "user_id"));
        return 0;
}

int session_apps_of_labels(const json_t *labels, struct service_ports *ret, struct tess_error **err)
{
        const char *label = json_string_value(json_object_get(labels, SERVICE_PORTS_LABEL));
        int r = service_ports_parse(label ? label : "", label ? strlen(label) : 0, ret, err);

        return r < 0 ? tess_err_wrap(err, "the session's image") : 0;
}

int session_apps(struct manager *m, const char *session, struct service_ports *ret, struct tess_error **err)
{
        json_t *labels = NULL;
        char *wsproxy = NULL, user[40];
        int r = session_app_facts(m, session, &labels, &wsproxy, user, sizeof(user), err);

        free(wsproxy);
        if (r < 0)
                return r;
        r = session_apps_of_labels(labels, ret, err);
        json_decref(labels);
        return r;
}

json_t *api_session_service_ports(struct manager *m, const char *session)
{
        struct tess_error *err = NULL;
        struct service_ports sp;
        json_t *out = json_array();

        if (session_apps(m, session, &sp, &err) < 0) {
                tess_error_free(err); /* a label that does not parse declares nothing to use */
                return out;
        }
        for (int i = 0; i < sp.n; i++) {
                json_t *ports = json_array();
                for (int k = 0; k < sp.apps[i].nports; k++)
                        json_array_append_new(ports, json_integer(sp.apps[i].ports[k]));
                json_array_append_new(out, json_pack("{s:s, s:s, s:O, s:o}", "name", sp.apps[i].name, "protocol",
                                                     service_protocol_to_string(sp.apps[i].protocol), "ports", ports,
                                                     "container_ports", ports));
        }
        return out;
}
