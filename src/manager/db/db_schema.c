/* db_schema.c - versioned schema migrations, applied in order at start.
 *
 * Each migration is one transaction that also records its version in
 * schema_migrations, so a crash mid-migration leaves the previous version.
 * On PostgreSQL an advisory lock serializes managers starting together.
 * Conventions: ids are UUID text; timestamps are BIGINT microseconds since
 * the epoch; booleans are INTEGER 0/1; JSON is TEXT; resource slots are JSON
 * objects of decimal strings.  Never edit a released migration: add one. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "manager/db/db.h"

struct migration {
        int version;
        const char *sql;
};

static const struct migration migrations[] = {
        { 1,
          "CREATE TABLE domains ("
          " name TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, description TEXT NOT NULL DEFAULT '',"
          " is_active INTEGER NOT NULL DEFAULT 1, total_resource_slots TEXT NOT NULL DEFAULT '{}',"
          " allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}', allowed_docker_registries TEXT NOT NULL DEFAULT '[]',"
          " created_at BIGINT NOT NULL, modified_at BIGINT NOT NULL);"
          "CREATE TABLE keypair_resource_policies ("
          " name TEXT PRIMARY KEY, total_resource_slots TEXT NOT NULL DEFAULT '{}',"
          " max_concurrent_sessions BIGINT NOT NULL DEFAULT 30, max_pending_session_count BIGINT,"
          " max_pending_session_resource_slots TEXT, max_containers_per_session BIGINT NOT NULL DEFAULT 1,"
          " idle_timeout BIGINT NOT NULL DEFAULT 0, max_session_lifetime BIGINT NOT NULL DEFAULT 0,"
          " created_at BIGINT NOT NULL);"
          "CREATE TABLE projects ("
          " id TEXT PRIMARY KEY, name TEXT NOT NULL, domain_name TEXT NOT NULL REFERENCES domains(name),"
          " description TEXT NOT NULL DEFAULT '', is_active INTEGER NOT NULL DEFAULT 1,"
          " total_resource_slots TEXT NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL,"
          " modified_at BIGINT NOT NULL, UNIQUE (domain_name, name));"
          "CREATE TABLE users ("
          " id TEXT PRIMARY KEY, email TEXT NOT NULL UNIQUE, username TEXT NOT NULL UNIQUE,"
          " password_hash TEXT NOT NULL, need_password_change INTEGER NOT NULL DEFAULT 0,"
          " full_name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',"
          " status TEXT NOT NULL DEFAULT 'active', domain_name TEXT NOT NULL REFERENCES domains(name),"
          " role TEXT NOT NULL DEFAULT 'user', created_at BIGINT NOT NULL, modified_at BIGINT NOT NULL);"
          "CREATE TABLE project_members ("
          " project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,"
          " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, PRIMARY KEY (project_id, user_id));"
          "CREATE TABLE keypairs ("
          " access_key TEXT PRIMARY KEY, secret_key_sealed TEXT NOT NULL,"
          " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
          " is_active INTEGER NOT NULL DEFAULT 1, is_main INTEGER NOT NULL DEFAULT 0,"
          " resource_policy TEXT NOT NULL REFERENCES keypair_resource_policies(name),"
          " rate_limit BIGINT NOT NULL DEFAULT 10000, num_queries BIGINT NOT NULL DEFAULT 0,"
          " last_used BIGINT, created_at BIGINT NOT NULL);"
          "CREATE INDEX keypairs_user ON keypairs(user_id);"
          "CREATE TABLE resource_groups ("
          " name TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE, description TEXT NOT NULL DEFAULT '',"
          " is_active INTEGER NOT NULL DEFAULT 1, is_public INTEGER NOT NULL DEFAULT 1,"
          " scheduler TEXT NOT NULL DEFAULT 'fifo', scheduler_opts TEXT NOT NULL DEFAULT '{}',"
          " wsproxy_addr TEXT NOT NULL DEFAULT '', created_at BIGINT NOT NULL);"
          "CREATE TABLE resource_group_domains ("
          " resource_group TEXT NOT NULL REFERENCES resource_groups(name) ON DELETE CASCADE,"
          " domain_name TEXT NOT NULL REFERENCES domains(name) ON DELETE CASCADE,"
          " PRIMARY KEY (resource_group, domain_name));"
          "CREATE TABLE resource_group_projects ("
          " resource_group TEXT NOT NULL REFERENCES resource_groups(name) ON DELETE CASCADE,"
          " project_id TEXT NOT NULL REFERENCES projects(id) ON DELETE CASCADE,"
          " PRIMARY KEY (resource_group, project_id));"
          "CREATE TABLE resource_group_keypairs ("
          " resource_group TEXT NOT NULL REFERENCES resource_groups(name) ON DELETE CASCADE,"
          " access_key TEXT NOT NULL REFERENCES keypairs(access_key) ON DELETE CASCADE,"
          " PRIMARY KEY (resource_group, access_key));"
          "CREATE TABLE resource_presets ("
          " name TEXT PRIMARY KEY, resource_slots TEXT NOT NULL DEFAULT '{}', shared_memory BIGINT,"
          " resource_group TEXT REFERENCES resource_groups(name) ON DELETE CASCADE,"
          " created_at BIGINT NOT NULL);"
          "CREATE TABLE images ("
          " id TEXT PRIMARY KEY, name TEXT NOT NULL, tag TEXT NOT NULL, registry TEXT NOT NULL DEFAULT '',"
          " architecture TEXT NOT NULL DEFAULT 'x86_64', digest TEXT NOT NULL DEFAULT '',"
          " labels TEXT NOT NULL DEFAULT '{}', min_resources TEXT NOT NULL DEFAULT '{}',"
          " max_resources TEXT NOT NULL DEFAULT '{}', size_bytes BIGINT NOT NULL DEFAULT 0,"
          " created_at BIGINT NOT NULL, UNIQUE (name, tag, architecture));"
          "CREATE TABLE agents ("
          " id TEXT PRIMARY KEY, address TEXT NOT NULL DEFAULT '', status TEXT NOT NULL DEFAULT 'ALIVE',"
          " resource_group TEXT NOT NULL DEFAULT 'default', schedulable INTEGER NOT NULL DEFAULT 1,"
          " available_slots TEXT NOT NULL DEFAULT '{}', occupied_slots TEXT NOT NULL DEFAULT '{}',"
          " architecture TEXT NOT NULL DEFAULT 'x86_64', version TEXT NOT NULL DEFAULT '',"
          " first_contact BIGINT NOT NULL, last_heartbeat BIGINT NOT NULL, lost_at BIGINT);"
          "CREATE TABLE sessions ("
          " id TEXT PRIMARY KEY, name TEXT NOT NULL, session_type TEXT NOT NULL DEFAULT 'interactive',"
          " priority BIGINT NOT NULL DEFAULT 10, cluster_mode TEXT NOT NULL DEFAULT 'single-node',"
          " cluster_size BIGINT NOT NULL DEFAULT 1, domain_name TEXT NOT NULL, project_id TEXT NOT NULL,"
          " user_id TEXT NOT NULL, access_key TEXT NOT NULL, image TEXT NOT NULL,"
          " architecture TEXT NOT NULL DEFAULT 'x86_64', tag TEXT, resource_group TEXT,"
          " requested_slots TEXT NOT NULL DEFAULT '{}', occupying_slots TEXT NOT NULL DEFAULT '{}',"
          " environ TEXT NOT NULL DEFAULT '{}', resource_opts TEXT NOT NULL DEFAULT '{}',"
          " mounts TEXT NOT NULL DEFAULT '[]', mount_map TEXT NOT NULL DEFAULT '{}',"
          " preopen_ports TEXT NOT NULL DEFAULT '[]', designated_agents TEXT NOT NULL DEFAULT '[]',"
          " startup_command TEXT, bootstrap_script TEXT, callback_url TEXT, starts_at BIGINT,"
          " batch_timeout BIGINT, status TEXT NOT NULL, status_info TEXT, status_data TEXT NOT NULL DEFAULT '{}',"
          " status_history TEXT NOT NULL DEFAULT '{}', status_changed_at BIGINT NOT NULL,"
          " result TEXT NOT NULL DEFAULT 'UNDEFINED', num_queries BIGINT NOT NULL DEFAULT 0,"
          " last_stat TEXT, created_at BIGINT NOT NULL, terminated_at BIGINT);"
          "CREATE UNIQUE INDEX sessions_live_name ON sessions(access_key, name)"
          " WHERE status NOT IN ('TERMINATED', 'CANCELLED', 'ERROR');"
          "CREATE INDEX sessions_status ON sessions(status, resource_group);"
          "CREATE INDEX sessions_owner ON sessions(user_id, created_at);"
          "CREATE INDEX sessions_project ON sessions(project_id);"
          "CREATE TABLE session_dependencies ("
          " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
          " depends_on TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
          " PRIMARY KEY (session_id, depends_on));"
          "CREATE TABLE kernels ("
          " id TEXT PRIMARY KEY, session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,"
          " cluster_role TEXT NOT NULL DEFAULT 'main', cluster_idx BIGINT NOT NULL DEFAULT 1,"
          " cluster_hostname TEXT NOT NULL DEFAULT 'main1', agent_id TEXT, container_id TEXT,"
          " image TEXT NOT NULL, status TEXT NOT NULL, status_info TEXT, status_data TEXT NOT NULL DEFAULT '{}',"
          " status_history TEXT NOT NULL DEFAULT '{}', requested_slots TEXT NOT NULL DEFAULT '{}',"
          " occupied_slots TEXT NOT NULL DEFAULT '{}', exit_code BIGINT, container_log TEXT,"
          " created_at BIGINT NOT NULL, terminated_at BIGINT);"
          "CREATE INDEX kernels_session ON kernels(session_id);"
          "CREATE TABLE audit_log ("
          " id TEXT PRIMARY KEY, ts BIGINT NOT NULL, access_key TEXT, user_id TEXT, remote_addr TEXT,"
          " method TEXT NOT NULL, path TEXT NOT NULL, action TEXT NOT NULL, target TEXT,"
          " status BIGINT NOT NULL, detail TEXT);"
          "CREATE INDEX audit_log_ts ON audit_log(ts);" },
        { 2, "CREATE INDEX sessions_owner_name ON sessions(access_key, name, created_at);" },
        /* the scheduler: per-device GPU allocations, agent registration,
         * occupancy intervals, idle tracking, daily usage */
        { 3,
          "ALTER TABLE users ADD COLUMN total_resource_slots TEXT NOT NULL DEFAULT '{}';"
          "ALTER TABLE agents ADD COLUMN devices TEXT NOT NULL DEFAULT '[]';"
          "ALTER TABLE agents ADD COLUMN runtime TEXT NOT NULL DEFAULT 'none';"
          "ALTER TABLE agents ADD COLUMN alloc_gen BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE kernels ADD COLUMN device_alloc TEXT NOT NULL DEFAULT '{}';"
          "CREATE INDEX kernels_agent ON kernels(agent_id, status);"
          "ALTER TABLE sessions ADD COLUMN occupied_at BIGINT;"
          "ALTER TABLE sessions ADD COLUMN last_activity_at BIGINT;"
          "ALTER TABLE sessions ADD COLUMN sched_retries BIGINT NOT NULL DEFAULT 0;"
          "CREATE TABLE usage_daily ("
          " day TEXT NOT NULL, session_id TEXT NOT NULL, user_id TEXT NOT NULL, project_id TEXT NOT NULL,"
          " domain_name TEXT NOT NULL, resource_group TEXT NOT NULL DEFAULT '', seconds BIGINT NOT NULL DEFAULT 0,"
          " slot_seconds TEXT NOT NULL DEFAULT '{}', PRIMARY KEY (day, session_id));"
          "CREATE INDEX usage_daily_user ON usage_daily(user_id, day);"
          "CREATE INDEX usage_daily_project ON usage_daily(project_id, day);" },
        /* virtual folders (docs/design/vfolders.md): folders, who else may
         * use them, invitations; host permissions and quotas on policies
         * and projects; what a session mounts, resolved at create */
        { 4,
          "CREATE TABLE vfolders ("
          " id TEXT PRIMARY KEY, name TEXT NOT NULL, host TEXT NOT NULL, domain_name TEXT NOT NULL,"
          " ownership_type TEXT NOT NULL, owner_id TEXT NOT NULL, creator TEXT NOT NULL,"
          " usage_mode TEXT NOT NULL DEFAULT 'general', permission TEXT NOT NULL DEFAULT 'wd',"
          " status TEXT NOT NULL DEFAULT 'ready', created_at BIGINT NOT NULL, modified_at BIGINT NOT NULL,"
          " deleted_at BIGINT);"
          "CREATE UNIQUE INDEX vfolders_owner_name ON vfolders(ownership_type, owner_id, name)"
          " WHERE status = 'ready';"
          "CREATE INDEX vfolders_owner ON vfolders(owner_id);"
          "CREATE TABLE vfolder_permissions ("
          " vfolder_id TEXT NOT NULL REFERENCES vfolders(id) ON DELETE CASCADE,"
          " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, permission TEXT NOT NULL,"
          " PRIMARY KEY (vfolder_id, user_id));"
          "CREATE INDEX vfolder_permissions_user ON vfolder_permissions(user_id);"
          "CREATE TABLE vfolder_invitations ("
          " id TEXT PRIMARY KEY, vfolder_id TEXT NOT NULL REFERENCES vfolders(id) ON DELETE CASCADE,"
          " inviter TEXT NOT NULL, invitee TEXT NOT NULL, permission TEXT NOT NULL,"
          " state TEXT NOT NULL DEFAULT 'pending', created_at BIGINT NOT NULL, modified_at BIGINT NOT NULL);"
          "CREATE INDEX vfolder_invitations_invitee ON vfolder_invitations(invitee, state);"
          "ALTER TABLE projects ADD COLUMN allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}';"
          "ALTER TABLE projects ADD COLUMN max_vfolder_count BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE projects ADD COLUMN max_quota_scope_size BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE keypair_resource_policies ADD COLUMN allowed_vfolder_hosts TEXT NOT NULL DEFAULT '{}';"
          "ALTER TABLE keypair_resource_policies ADD COLUMN max_vfolder_count BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE keypair_resource_policies ADD COLUMN max_quota_scope_size BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE sessions ADD COLUMN vfolder_mounts TEXT NOT NULL DEFAULT '[]';"
          /* domains made before folders existed may use the default host */
          "UPDATE domains SET allowed_vfolder_hosts = '{\"local\":[\"create-vfolder\",\"modify-vfolder\","
          "\"delete-vfolder\",\"mount-in-session\",\"upload-file\",\"download-file\",\"invite-others\","
          "\"set-user-specific-permission\"]}' WHERE allowed_vfolder_hosts = '{}';" },
        /* the image registry (docs/images.md): aliases, hidden images */
        { 5,
          "CREATE TABLE image_aliases ("
          " alias TEXT PRIMARY KEY, image_id TEXT NOT NULL REFERENCES images(id) ON DELETE CASCADE,"
          " created_at BIGINT NOT NULL);"
          "CREATE INDEX image_aliases_image ON image_aliases(image_id);"
          "ALTER TABLE images ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;" },
        /* registries to scan, private images (session commit), background tasks */
        { 6,
          "CREATE TABLE container_registries ("
          " name TEXT PRIMARY KEY, url TEXT NOT NULL, project TEXT NOT NULL DEFAULT '',"
          " username TEXT NOT NULL DEFAULT '', password_sealed TEXT NOT NULL DEFAULT '',"
          " last_scan_at BIGINT, created_at BIGINT NOT NULL);"
          "ALTER TABLE images ADD COLUMN owner_id TEXT;"
          "CREATE INDEX images_owner ON images(owner_id);"
          "ALTER TABLE keypair_resource_policies ADD COLUMN max_customized_image_count BIGINT NOT NULL DEFAULT 3;"
          "CREATE TABLE background_tasks ("
          " id TEXT PRIMARY KEY, kind TEXT NOT NULL, status TEXT NOT NULL DEFAULT 'ongoing',"
          " current_progress BIGINT NOT NULL DEFAULT 0, total_progress BIGINT NOT NULL DEFAULT 0,"
          " message TEXT NOT NULL DEFAULT '', user_id TEXT NOT NULL, domain_name TEXT NOT NULL,"
          " session_id TEXT, result TEXT NOT NULL DEFAULT '{}', created_at BIGINT NOT NULL,"
          " modified_at BIGINT NOT NULL);"
          "CREATE INDEX background_tasks_session ON background_tasks(session_id);" },
        /* the web UI's login sessions (web_session.h) */
        { 7,
          "CREATE TABLE web_sessions ("
          " id TEXT PRIMARY KEY, user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
          " access_key TEXT NOT NULL REFERENCES keypairs(access_key) ON DELETE CASCADE,"
          " csrf_token TEXT NOT NULL, created_at BIGINT NOT NULL, last_used BIGINT NOT NULL);"
          "CREATE INDEX web_sessions_last_used ON web_sessions(last_used);" },
        /* the app proxy's tokens and cookies (app_token.h) */
        { 8,
          "CREATE TABLE app_tokens ("
          " token_hash TEXT PRIMARY KEY, kind TEXT NOT NULL,"
          " session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE, app TEXT NOT NULL,"
          " port BIGINT NOT NULL, user_id TEXT NOT NULL, created_at BIGINT NOT NULL, expires_at BIGINT NOT NULL);"
          "CREATE INDEX app_tokens_expires ON app_tokens(expires_at);" },
        /* measured use (usage_measure.h): each kernel's last reported
         * cumulative counters, each session-day's increases and peak */
        { 9,
          "ALTER TABLE kernels ADD COLUMN stat_cpu_used_usec BIGINT;"
          "ALTER TABLE kernels ADD COLUMN stat_io_read_bytes BIGINT;"
          "ALTER TABLE kernels ADD COLUMN stat_io_write_bytes BIGINT;"
          "ALTER TABLE usage_daily ADD COLUMN cpu_used_usec BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE usage_daily ADD COLUMN io_read_bytes BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE usage_daily ADD COLUMN io_write_bytes BIGINT NOT NULL DEFAULT 0;"
          "ALTER TABLE usage_daily ADD COLUMN mem_peak_bytes BIGINT NOT NULL DEFAULT 0;" },
        /* agents that stop heartbeating are UNREACHABLE before LOST
         * (scheduler_reaper.c): how often each promised to beat, and
         * since when it is silent */
        { 10,
          "ALTER TABLE agents ADD COLUMN heartbeat_interval BIGINT NOT NULL DEFAULT 5000000;"
          "ALTER TABLE agents ADD COLUMN unreachable_since BIGINT;" },
        /* app links and cookies name the keypair they were given to, which
         * every use checks again (app_token.h); older rows name none and
         * are refused */
        { 11, "ALTER TABLE app_tokens ADD COLUMN access_key TEXT NOT NULL DEFAULT '';" },
        /* accounts (docs/admin-accounts.md): how many keypairs a user may
         * hold, whether users may make their own, the highest priority a
         * plain user may give a session */
        { 12,
          "ALTER TABLE keypair_resource_policies ADD COLUMN max_keypairs_per_user BIGINT NOT NULL DEFAULT 10;"
          "ALTER TABLE keypair_resource_policies ADD COLUMN allow_user_keypairs INTEGER NOT NULL DEFAULT 1;"
          "ALTER TABLE keypair_resource_policies ADD COLUMN max_session_priority BIGINT NOT NULL DEFAULT 10;" },
        /* what a session's containers may write outside their folders
         * (their writable layers, layer_disk.h); 0: the node's limit */
        { 13, "ALTER TABLE keypair_resource_policies ADD COLUMN max_container_disk BIGINT NOT NULL DEFAULT 0;" },
        /* what a superadmin sets for the whole service: the announcement,
         * the frozen state (api/server_state.h) */
        { 14,
          "CREATE TABLE manager_settings ("
          " key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at BIGINT NOT NULL);" },
        /* folder clones (src/manager/vfolder/api_vfolder_clone.c): whether
         * a folder may be cloned, the task copying into a folder being
         * cloned; a folder's name is taken while it is cloned too */
        { 15,
          "ALTER TABLE vfolders ADD COLUMN cloneable INTEGER NOT NULL DEFAULT 0;"
          "ALTER TABLE vfolders ADD COLUMN clone_task TEXT;"
          "DROP INDEX vfolders_owner_name;"
          "CREATE UNIQUE INDEX vfolders_owner_name ON vfolders(ownership_type, owner_id, name)"
          " WHERE status IN ('ready', 'cloning');" },
        /* Backend.AI's error logs (api_error_logs.c): what clients report,
         * with the reporter's user and domain */
        { 16,
          "CREATE TABLE error_logs ("
          " id TEXT PRIMARY KEY, created_at BIGINT NOT NULL, severity TEXT NOT NULL, source TEXT NOT NULL,"
          " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, domain_name TEXT NOT NULL,"
          " is_read INTEGER NOT NULL DEFAULT 0, is_cleared INTEGER NOT NULL DEFAULT 0, message TEXT NOT NULL,"
          " context_lang TEXT NOT NULL, context_env TEXT NOT NULL, request_url TEXT, request_status BIGINT,"
          " traceback TEXT);"
          "CREATE INDEX error_logs_created ON error_logs(created_at);"
          "CREATE INDEX error_logs_user ON error_logs(user_id, created_at);"
          "CREATE INDEX error_logs_domain ON error_logs(domain_name, created_at);" },
        /* a user's dotfiles (accounts/dotfiles.h): files every new session
         * finds in its home directory */
        { 17,
          "CREATE TABLE user_dotfiles ("
          " user_id TEXT NOT NULL REFERENCES users(id) ON DELETE CASCADE, path TEXT NOT NULL,"
          " permission TEXT NOT NULL, data TEXT NOT NULL, created_at BIGINT NOT NULL, modified_at BIGINT NOT NULL,"
          " PRIMARY KEY (user_id, path));" },
        /* Backend.AI's session templates (sessions/api_session_template.c):
         * a user's saved session request, as JSON; deleting one only
         * deactivates it */
        { 18,
          "CREATE TABLE session_templates ("
          " id TEXT PRIMARY KEY, name TEXT NOT NULL, user_id TEXT NOT NULL, project_id TEXT,"
          " domain_name TEXT NOT NULL, template TEXT NOT NULL, created_at BIGINT NOT NULL,"
          " modified_at BIGINT NOT NULL, is_active INTEGER NOT NULL DEFAULT 1);"
          "CREATE INDEX session_templates_user ON session_templates(user_id, is_active);" },
};

int db_schema_version(struct db *db, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        int r;

        r = db_exec_script(db,
                           "CREATE TABLE IF NOT EXISTS schema_migrations ("
                           " version INTEGER PRIMARY KEY, applied_at BIGINT NOT NULL)",
                           err);
        if (r < 0)
                return r;
        r = db_query(db, "SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations", NULL, 0, &rows, err);
        if (r < 0)
                return r;
        return (int)db_get_int(rows, 0, "v");
}

static int apply(struct db *db, const struct migration *m, struct tess_error **err)
{
        int r = db_begin(db, err);
        if (r < 0)
                return r;
        r = db_exec_script(db, m->sql, err);
        if (r >= 0)
                r = DBQ(db, "INSERT INTO schema_migrations(version, applied_at) VALUES (?, ?)", NULL, err,
                        DB_INT(m->version), DB_INT(now_usec()));
        if (r >= 0)
                r = db_commit(db, err);
        else
                db_rollback(db);
        if (r < 0)
                return tess_err_wrap(err, "applying schema migration %d", m->version);
        return 0;
}

int db_migrate(struct db *db, struct tess_error **err)
{
        int cur, r = 0;

        if (db_kind(db) == DB_POSTGRES) {
                r = db_exec_script(db, "SELECT pg_advisory_lock(7419001)", err);
                if (r < 0)
                        return r;
        }
        cur = db_schema_version(db, err);
        if (cur < 0) {
                r = cur;
                goto out_unlock;
        }
        if (cur > migrations[ARRAY_SIZE(migrations) - 1].version) {
                r = tess_err(err, EINVAL, "database schema version %d is newer than this tessera (%d)", cur,
                             migrations[ARRAY_SIZE(migrations) - 1].version);
                goto out_unlock;
        }
        for (size_t i = 0; i < ARRAY_SIZE(migrations) && r >= 0; i++)
                if (migrations[i].version > cur)
                        r = apply(db, &migrations[i], err);
out_unlock:
        if (db_kind(db) == DB_POSTGRES)
                db_exec_script(db, "SELECT pg_advisory_unlock(7419001)", NULL);
        return r < 0 ? r : 0;
}
