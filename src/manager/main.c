/* main.c - `tessera manager` and `tessera dev`: configuration, start-up,
 * signals (SIGTERM/SIGINT stop cleanly, SIGHUP reloads) and the loop.
 *
 * Start-up: config -> state dir -> master key -> database (migrations) ->
 * bootstrap -> event bus (shared with the other managers on PostgreSQL)
 * -> HTTP server -> loop.  `tessera dev` is the embedded default:
 * SQLite in --state-dir, one node (the agent joins here in a later part). */
#include "common/compat.h"

#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_call.h"
#include "manager/agents/agent_sync.h"
#include "manager/api/api.h"
#include "manager/api/audit.h"
#include "manager/api/auth.h"
#include "manager/api/ratelimit.h"
#include "manager/api/held_conn.h"
#include "manager/api/login_guard.h"
#include "manager/api/web_session.h"
#include "manager/core/events.h"
#include "manager/api/public_hosts.h"
#include "manager/core/manager.h"
#include "manager/core/metrics.h"
#include "manager/db/db.h"
#include "manager/http/http.h"
#include "manager/images/blob_store.h"
#include "manager/images/registry_rescan.h"
#include "manager/main.h"
#include "manager/scheduler/scheduler.h"
#include "manager/tasks/bgtask.h"
#include "manager/vfolder/vfolder.h"

#define MC struct manager_conf
const struct conf_opt manager_conf_opts[] = {
        CONF_OPT("listen", CONF_T_STR, MC, listen, "127.0.0.1:8090", 0, 0, false, "HOST:PORT of the API"),
        CONF_OPT("app_listen", CONF_T_STR, MC, app_listen, "auto", 0, 0, false,
                 "HOST:PORT of the app proxy, an origin apart from the API and web UI, which never serve apps; "
                 "auto: listen's host and port + 1; off: no apps (docs/app-proxy.md)"),
        CONF_OPT("web_url", CONF_T_STR, MC, web_url, NULL, 0, 0, false,
                 "the web UI's URL as browsers reach it (https://tessera.example.org), where an app link "
                 "checks the user's login (default: the app link's host name with listen's port)"),
        CONF_OPT("app_url", CONF_T_STR, MC, app_url, NULL, 0, 0, false,
                 "the app proxy's URL as browsers reach it, with * for a host name of each session's own "
                 "(https://*.apps.example.org: a wildcard DNS name and certificate; default: the API's host "
                 "name with app_listen's port)"),
        CONF_OPT("database", CONF_T_STR, MC, database, NULL, 0, 0, false,
                 "sqlite:PATH or postgresql://... (default: sqlite in state_dir)"),
        CONF_OPT("state_dir", CONF_T_STR, MC, state_dir, "/var/lib/tessera", 0, 0, false,
                 "where the manager keeps its files"),
        CONF_OPT("master_key_file", CONF_T_STR, MC, master_key_file, NULL, 0, 0, false,
                 "key sealing keypair secrets (default: state_dir/master.key)"),
        CONF_OPT("cluster_secret_file", CONF_T_STR, MC, cluster_secret_file, NULL, 0, 0, false,
                 "secret shared with the agents (default: state_dir/cluster.secret)"),
        CONF_OPT("log_level", CONF_T_STR, MC, log_level, "info", 0, 0, true, "debug, info, notice, warn, error"),
        CONF_OPT("database_wait", CONF_T_USEC, MC, database_wait, "2m", 0, 0, false,
                 "at start, how long to wait for a database that cannot be reached yet (0: do not wait)"),
        CONF_OPT("sqlite_sync", CONF_T_STR, MC, sqlite_sync, "normal", 0, 0, false,
                 "normal (survives process crashes) or full (also power loss)"),
        CONF_OPT("max_body", CONF_T_SIZE, MC, max_body, "1m", 1024, 1ULL << 30, false, "largest request body"),
        CONF_OPT("max_upload", CONF_T_SIZE, MC, max_upload, "64m", 1024, 64ULL << 20, false,
                 "largest body of a file upload into a session"),
        CONF_OPT("max_inflight", CONF_T_SIZE, MC, max_inflight, "512m", 1 << 20, 1ULL << 40, false,
                 "request body bytes the manager holds at once, all clients together (then 503)"),
        CONF_OPT("max_inflight_per_client", CONF_T_SIZE, MC, max_inflight_per_client, "160m", 1 << 20, 1ULL << 40,
                 false, "request body bytes held at once for one client address (then 429)"),
        CONF_OPT("max_spool", CONF_T_SIZE, MC, max_spool, "4g", 1 << 20, 1ULL << 50, false,
                 "upload body bytes kept on disk (state_dir/spool) at once, all clients together (then 503)"),
        CONF_OPT("max_spool_per_client", CONF_T_SIZE, MC, max_spool_per_client, "1g", 1 << 20, 1ULL << 50, false,
                 "upload body bytes kept on disk at once for one client address (then 429)"),
        CONF_OPT("max_json_depth", CONF_T_U64, MC, max_json_depth, "32", 2, 1000, true, "deepest JSON nesting"),
        CONF_OPT("max_string_len", CONF_T_U64, MC, max_string_len, "65536", 64, 1 << 24, true,
                 "longest JSON string"),
        CONF_OPT("max_page_size", CONF_T_U64, MC, max_page_size, "1000", 1, 100000, true,
                 "largest page of a list"),
        CONF_OPT("trusted_proxies", CONF_T_STR, MC, trusted_proxies, NULL, 0, 0, false,
                 "addresses of fronts (haproxy, deploy/haproxy.cfg) whose X-Forwarded-For names the client, "
                 "comma-separated (default: none; the header is ignored)"),
        CONF_OPT("public_hosts", CONF_T_STR, MC, public_hosts, NULL, 0, 0, false,
                 "host names (or addresses) clients reach the API by, comma-separated, '*.DOMAIN' for its "
                 "subdomains, '*' for any; a signed request made for another Host is refused (default: "
                 "localhost, this machine's host name and the addresses of its interfaces)"),
        CONF_OPT("max_connections", CONF_T_U64, MC, max_connections, "4096", 16, 1000000, false,
                 "concurrent HTTP connections"),
        CONF_OPT("rate_limit_window", CONF_T_USEC, MC, rate_limit_window, "15m", 0, 0, true,
                 "window of the per-keypair rate limit"),
        CONF_OPT("session_wait_default", CONF_T_USEC, MC, session_wait_default, "60s", 0, 0, true,
                 "how long POST /session waits for RUNNING without maxWaitSeconds"),
        CONF_OPT("auth_cache_ttl", CONF_T_USEC, MC, auth_cache_ttl, "5s", 0, 0, true,
                 "how long a verified keypair is cached (0 = ask the database every time)"),
        CONF_OPT("scheduler_interval", CONF_T_USEC, MC, scheduler_interval, "5s", 0, 0, true,
                 "periodic scheduling pass (events trigger passes in between)"),
        CONF_OPT("agent_lost_timeout", CONF_T_USEC, MC, agent_lost_timeout, "1h", 0, 0, true,
                 "an agent silent this long (as this manager saw it: from its start, or the end of a database "
                 "outage, at the earliest) is LOST and its sessions end in ERROR; before, silent for three "
                 "heartbeats, it is UNREACHABLE and its sessions wait for it (0: never LOST)"),
        CONF_OPT("audit_reads", CONF_T_BOOL, MC, audit_reads, "false", 0, 0, true,
                 "record read-only requests in the audit log too"),
        CONF_OPT("vfolder_hosts", CONF_T_STR, MC, vfolder_hosts, NULL, 0, 0, false,
                 "storage hosts of virtual folders, NAME=PATH,... (default: local=state_dir/vfolders); "
                 "agents must list the same names"),
        CONF_OPT("vfolder_default_host", CONF_T_STR, MC, vfolder_default_host, "local", 0, 0, false,
                 "the host of folders created without one"),
        CONF_OPT("vfolder_upload_keep", CONF_T_USEC, MC, vfolder_upload_keep, "7d", 0, 0, true,
                 "a partial folder upload that has not grown this long is removed (0 = never)"),
        CONF_OPT("task_lease", CONF_T_USEC, MC, task_lease, "2m", 1000000, 0, true,
                 "a background task running in a manager that has not touched it this long is failed "
                 "(its manager is gone)"),
        CONF_OPT("web_dir", CONF_T_STR, MC, web_dir, NULL, 0, 0, false,
                 "the built web UI served at / and /ui/ (default: the directory web beside the tessera binary)"),
        CONF_OPT("app_token_ttl", CONF_T_USEC, MC, app_token_ttl, "5m", 0, 0, true,
                 "how long the token of start-service opens the app (docs/app-proxy.md)"),
        CONF_OPT("app_cookie_ttl", CONF_T_USEC, MC, app_cookie_ttl, "12h", 0, 0, true,
                 "how long an opened app stays reachable by its cookie"),
        CONF_OPT("terminate_inactive_users", CONF_T_BOOL, MC, terminate_inactive_users, "true", 0, 0, true,
                 "the sessions of a user made inactive end (running ones terminated, pending ones cancelled, "
                 "reason owner-inactive); false leaves them, as Backend.AI does (docs/admin-accounts.md)"),
        {},
};
#undef MC

static void apply_log_level(const char *level)
{
        int l = log_level_from_string(level);
        if (l >= 0)
                log_max_level = (enum log_level)l;
}

/* Whether a URL option is http(s)://HOST[:PORT] without a path (a "*."
 * first label allowed when star). */
static bool origin_url_valid(const char *url, bool star)
{
        const char *host = strstr(url, "://");

        if (!host || !(strncmp(url, "http://", 7) == 0 || strncmp(url, "https://", 8) == 0))
                return false;
        host += 3;
        if (star && strncmp(host, "*.", 2) == 0)
                host += 2;
        return *host && strspn(host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.:[]") ==
                                strlen(host);
}

/* app_listen: auto becomes listen's host with the next port (port 0 stays
 * 0: any free port), off (or empty) none; never listen's own address. */
static int resolve_app_listen(struct manager_conf *c, struct tess_error **err)
{
        if (c->app_listen && (!*c->app_listen || streq(c->app_listen, "off"))) {
                free(c->app_listen);
                c->app_listen = NULL;
        } else if (c->app_listen && streq(c->app_listen, "auto")) {
                const char *colon = strrchr(c->listen, ':');
                char *end = NULL;
                long port = colon ? strtol(colon + 1, &end, 10) : -1;
                if (!colon || !end || *end || end == colon + 1 || port < 0 || port >= 65535)
                        return tess_err(err, EINVAL, "app_listen: auto needs listen as HOST:PORT below 65535, "
                                                     "not '%s': set app_listen", c->listen);
                free(c->app_listen);
                c->app_listen = xasprintf("%.*s:%ld", (int)(colon - c->listen), c->listen, port ? port + 1 : 0);
        }
        if (c->app_listen && streq(c->app_listen, c->listen) && !strstr(c->listen, ":0"))
                return tess_err(err, EINVAL, "app_listen: must not be listen's address");
        if (c->web_url && !origin_url_valid(c->web_url, false))
                return tess_err(err, EINVAL, "web_url: an http(s)://HOST[:PORT] without a path, not '%s'",
                                c->web_url);
        if (c->app_url && !origin_url_valid(c->app_url, true))
                return tess_err(err, EINVAL,
                                "app_url: an http(s)://HOST[:PORT] (or http(s)://*.DOMAIN[:PORT]) without a path, "
                                "not '%s'",
                                c->app_url);
        if (c->app_url && strchr(c->app_url, '*') && !c->web_url)
                return tess_err(err, EINVAL, "app_url: a host name per session (*) needs web_url");
        return 0;
}

static int validate_conf(struct manager_conf *c, struct tess_error **err)
{
        int r;

        if (log_level_from_string(c->log_level) < 0)
                return tess_err(err, EINVAL, "log_level: '%s' is not a log level", c->log_level);
        if (!streq(c->sqlite_sync, "normal") && !streq(c->sqlite_sync, "full"))
                return tess_err(err, EINVAL, "sqlite_sync: must be normal or full");
        r = resolve_app_listen(c, err);
        if (r < 0)
                return r;
        if (!c->database)
                c->database = xasprintf("sqlite:%s/tessera.db", c->state_dir);
        if (!c->master_key_file)
                c->master_key_file = xasprintf("%s/master.key", c->state_dir);
        if (!c->cluster_secret_file)
                c->cluster_secret_file = xasprintf("%s/cluster.secret", c->state_dir);
        return 0;
}

static void reload(struct manager *m)
{
        struct manager_conf fresh;
        struct tess_error *err = NULL;

        if (!m->config_path) {
                log_info("SIGHUP: no config file to reload, ignoring");
                return;
        }
        memset(&fresh, 0, sizeof(fresh));
        if (conf_defaults(manager_conf_opts, &fresh, &err) < 0 ||
            conf_load_file(manager_conf_opts, &fresh, m->config_path, &err) < 0 || validate_conf(&fresh, &err) < 0) {
                log_error("reloading '%s' failed, keeping the running configuration: %s", m->config_path, err->msg);
                tess_error_free(err);
                conf_release(manager_conf_opts, &fresh);
                return;
        }
        /* swap in what can change while running */
        for (const struct conf_opt *o = manager_conf_opts; o->name; o++) {
                if (!o->reloadable)
                        continue;
                char *dst = (char *)&m->conf + o->offset, *src = (char *)&fresh + o->offset;
                if (o->type == CONF_T_STR) {
                        char *tmp = *(char **)dst;
                        *(char **)dst = *(char **)src;
                        *(char **)src = tmp;
                } else if (o->type == CONF_T_BOOL) {
                        memcpy(dst, src, sizeof(bool));
                } else {
                        memcpy(dst, src, sizeof(uint64_t));
                }
        }
        apply_log_level(m->conf.log_level);
        conf_release(manager_conf_opts, &fresh);
        log_notice("reloaded '%s'", m->config_path);
}

static void on_signal(struct loop *l, int fd, uint32_t events UNUSED, void *data)
{
        struct manager *m = data;
        struct signalfd_siginfo si;

        while (read(fd, &si, sizeof(si)) == sizeof(si)) {
                if (si.ssi_signo == SIGHUP) {
                        reload(m);
                } else {
                        log_notice("signal %d: shutting down", (int)si.ssi_signo);
                        loop_stop(l);
                }
        }
}

static void flush_one(const char *key, int64_t delta, void *data)
{
        struct manager *m = data;
        DBQ(m->db, "UPDATE keypairs SET num_queries = num_queries + ?, last_used = ? WHERE access_key = ?", NULL,
            NULL, DB_INT(delta), DB_INT(now_usec()), DB_TEXT(key));
}

/* Every few seconds, fold the per-keypair request counts into the database
 * in one transaction (num_queries, last_used). */
static void on_flush_timer(struct loop *l, void *data)
{
        struct manager *m = data;

        if (db_begin(m->db, NULL) >= 0) {
                ratelimit_drain_counts(m->ratelimit, flush_one, m);
                if (db_commit(m->db, NULL) < 0)
                        db_rollback(m->db);
        }
        loop_add_timer(l, 5 * USEC_PER_SEC, on_flush_timer, m);
}

/* The database, waiting up to conf.database_wait for one that cannot be
 * reached yet (a PostgreSQL starting or restarting beside us); SIGTERM
 * still stops the manager meanwhile (its default action: nothing is open
 * yet). */
static int open_database(struct manager *m, struct tess_error **err)
{
        int64_t until = monotonic_usec() + m->conf.database_wait;
        bool told = false;
        int r;

        for (;;) {
                r = db_open(m->conf.database, streq(m->conf.sqlite_sync, "full"), &m->db, err);
                if (r != -EBUSY || monotonic_usec() >= until)
                        return r;
                if (!told)
                        log_warn("%s; waiting for it (database_wait)", (*err)->msg);
                told = true;
                *err = tess_error_free(*err);
                usleep(USEC_PER_SEC);
        }
}

static int manager_run(struct manager *m, struct tess_error **err)
{
        sigset_t mask;
        int sfd, r;

        apply_log_level(m->conf.log_level);
        /* Requests allocate and free the same few hundred KiB over and over:
         * keep it instead of trimming the heap and faulting it back in. */
        mallopt(M_TRIM_THRESHOLD, 64 << 20);
        /* upload bodies (up to max_upload, 64 MiB) too: a fresh mapping
         * per request is a page fault per 4 KiB */
        mallopt(M_MMAP_THRESHOLD, 80 << 20);
        umask(027); /* the database holds password hashes and sealed secrets */
        r = fs_mkdir_p(m->conf.state_dir, 0700, err);
        if (r < 0)
                return r;
        /* upload bodies on their way in (http_spool.h): unlinked files, but
         * a named one may be left by a crash on a filesystem without
         * O_TMPFILE */
        _cleanup_free_ char *spool_dir = xasprintf("%s/spool", m->conf.state_dir);
        r = fs_remove_tree(spool_dir, err);
        if (r >= 0)
                r = fs_mkdir_p(spool_dir, 0700, err);
        if (r < 0)
                return r;
        _cleanup_free_ char *images_dir = xasprintf("%s/images", m->conf.state_dir);
        r = blob_store_open(images_dir, &m->blobs, err);
        if (r < 0)
                return r;
        r = vfolder_hosts_open(m, err);
        if (r < 0)
                return r;
        r = manager_load_master_key(m, err);
        if (r < 0)
                return r;
        r = manager_load_cluster_secret(m, err);
        if (r < 0)
                return r;
        r = open_database(m, err);
        if (r < 0)
                return r;
        r = db_migrate(m->db, err);
        if (r < 0)
                return tess_err_wrap(err, "migrating the database schema");
        r = manager_bootstrap(m, err);
        if (r < 0)
                return r;
        r = loop_new(&m->loop, err);
        if (r < 0)
                return r;
        r = registry_rescan_leases(m, err);
        if (r < 0)
                return r;
        m->events = events_new();
        r = cluster_events_start(m, err);
        if (r < 0)
                return r;
        m->metrics = metrics_new();
        m->ratelimit = ratelimit_new();
        m->authcache = auth_cache_new();
        m->held = held_conns_new();
        m->public_hosts = public_hosts_new(m->conf.public_hosts, m->conf.listen);
        m->login_guard = login_guard_new();
        m->audit = audit_new();
        m->started_at = now_usec();

        signal(SIGPIPE, SIG_IGN);
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);
        sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
        if (sfd < 0)
                return tess_err(err, errno, "signalfd: %s", strerror(errno));
        r = loop_add_fd(m->loop, sfd, 0x001, on_signal, m, err);
        if (r < 0)
                return r;

        struct http_server_opts ho = {
                .listen = m->conf.listen,
                .max_body = m->conf.max_body,
                .body_limit = api_body_limit,
                .stream_body = api_stream_body,
                .max_conns = (unsigned)m->conf.max_connections,
                .conn_timeout_s = 120,
                .abort = api_request_abort,
                .admit = api_admit,
                .max_inflight = m->conf.max_inflight,
                .max_inflight_client = m->conf.max_inflight_per_client,
                .spool_dir = spool_dir,
                .max_spool = m->conf.max_spool,
                .max_spool_client = m->conf.max_spool_per_client,
                .trusted_proxies = m->conf.trusted_proxies,
        };
        r = http_server_start(m->loop, &ho, api_dispatch, api_request_done, m, &m->http, err);
        if (r < 0)
                return r;
        if (m->conf.app_listen) {
                ho.listen = m->conf.app_listen;
                ho.body_limit = api_body_limit_apps;
                ho.admit = api_admit_apps;
                r = http_server_start(m->loop, &ho, api_dispatch_apps, api_request_done, m, &m->app_http, err);
                if (r < 0)
                        return tess_err_wrap(err, "app_listen");
                log_notice("app proxy listening on http://%s (port %u)", m->conf.app_listen,
                           (unsigned)http_server_port(m->app_http));
        }
        loop_add_timer(m->loop, 5 * USEC_PER_SEC, on_flush_timer, m);
        vfolder_upload_sweep_start(m);
        m->scheduler = scheduler_start(m);
        m->agent_sync = agent_sync_new(m);
        if (m->dev && m->dev_agent.enabled && (r = dev_agent_start(m, err)) < 0)
                return r;
        log_notice("manager listening on http://%s (database %s)", m->conf.listen, db_kind_name(m->db));
        if (m->app_http)
                printf("Tessera is running: http://%s/ (apps: port %u)\n", m->conf.listen,
                       (unsigned)http_server_port(m->app_http));
        else
                printf("Tessera is running: http://%s/\n", m->conf.listen);
        fflush(stdout);

        r = loop_run(m->loop, err);

        agent_calls_abort();
        dev_agent_stop(m);
        m->app_http = http_server_stop(m->app_http);
        m->http = http_server_stop(m->http);
        m->scheduler = scheduler_stop(m->scheduler);
        m->agent_sync = agent_sync_free(m->agent_sync);
        cluster_events_stop(m);
        audit_flush(m);
        if (db_begin(m->db, NULL) >= 0) {
                ratelimit_drain_counts(m->ratelimit, flush_one, m);
                db_commit(m->db, NULL);
        }
        loop_del_fd(m->loop, sfd);
        close(sfd);
        return r;
}

static void manager_release(struct manager *m)
{
        m->app_http = http_server_stop(m->app_http);
        m->http = http_server_stop(m->http);
        m->scheduler = scheduler_stop(m->scheduler);
        m->agent_sync = agent_sync_free(m->agent_sync);
        cluster_events_stop(m);
        m->db = db_close(m->db);
        m->blobs = blob_store_close(m->blobs);
        vf_hosts_release(&m->vfolder_hosts);
        m->loop = loop_free(m->loop);
        m->events = events_free(m->events);
        m->metrics = metrics_free(m->metrics);
        m->ratelimit = ratelimit_free(m->ratelimit);
        m->authcache = auth_cache_free(m->authcache);
        m->held = held_conns_free(m->held);
        m->public_hosts = public_hosts_free(m->public_hosts);
        m->login_guard = login_guard_free(m->login_guard);
        m->audit = audit_free(m->audit);
        conf_release(manager_conf_opts, &m->conf);
        free(m->config_path);
}

static int finish(struct manager *m, int r, struct tess_error *err)
{
        if (r < 0) {
                fprintf(stderr, "tessera: error: %s\n", err ? err->msg : "failed");
                tess_error_free(err);
        }
        manager_release(m);
        return r < 0 ? 1 : 0;
}

static void usage_manager(FILE *f)
{
        fputs("usage: tessera manager --config FILE [--listen HOST:PORT] [--app-listen HOST:PORT] [--print-config]\n"
              "       tessera dev [--state-dir DIR] [--listen HOST:PORT] [--app-listen HOST:PORT] [--database URL]\n"
              "                   [--config FILE] [--no-agent] [--mock-gpus N] [--mock-gpu-memory SIZE] [--fgpu-per-gpu F]\n"
              "                   [--agent-network bridge|none] [--agent-runtime auto|runc|crun|COMMAND]\n",
              f);
}

static int common_main(int argc, char **argv, bool dev)
{
        static const struct option opts[] = {
                { "config", required_argument, NULL, 'c' },
                { "state-dir", required_argument, NULL, 's' },
                { "listen", required_argument, NULL, 'l' },
                { "app-listen", required_argument, NULL, 'A' },
                { "database", required_argument, NULL, 'd' },
                { "log-level", required_argument, NULL, 'L' },
                { "print-config", no_argument, NULL, 'P' },
                { "no-agent", no_argument, NULL, 'N' },
                { "mock-gpus", required_argument, NULL, 'G' },
                { "mock-gpu-memory", required_argument, NULL, 'M' },
                { "fgpu-per-gpu", required_argument, NULL, 'F' },
                { "agent-network", required_argument, NULL, 'W' },
                { "agent-runtime", required_argument, NULL, 'R' },
                { "help", no_argument, NULL, 'h' },
                {},
        };
        struct manager m = { .routes = api_route_tables,
                             .dev = dev,
                             .dev_agent = { .enabled = dev, .mock_gpu_memory = "16g", .fgpu_per_gpu = "1",
                                            .network = "bridge", .runtime = "auto" } };
        char host[64];
        struct tess_error *err = NULL;
        const char *over[6][2] = { { 0 } };
        int nover = 0, c, r;
        bool print = false;

        r = conf_defaults(manager_conf_opts, &m.conf, &err);
        if (r < 0)
                return finish(&m, r, err);
        if (dev) {
                conf_set(manager_conf_opts, &m.conf, "state_dir", "./tessera-data", NULL);
        }
        optind = 1;
        while ((c = getopt_long(argc, argv, "c:h", opts, NULL)) != -1) {
                switch (c) {
                case 'c':
                        free(m.config_path);
                        m.config_path = xstrdup(optarg);
                        break;
                case 's': over[nover][0] = "state_dir", over[nover++][1] = optarg; break;
                case 'l': over[nover][0] = "listen", over[nover++][1] = optarg; break;
                case 'A': over[nover][0] = "app_listen", over[nover++][1] = optarg; break;
                case 'd': over[nover][0] = "database", over[nover++][1] = optarg; break;
                case 'L': over[nover][0] = "log_level", over[nover++][1] = optarg; break;
                case 'P': print = true; break;
                case 'N': m.dev_agent.enabled = false; break;
                case 'G':
                        m.dev_agent.mock_gpus = (int)strtol(optarg, NULL, 10);
                        if (!dev || !*optarg || strspn(optarg, "0123456789") != strlen(optarg) || strlen(optarg) > 2 ||
                            m.dev_agent.mock_gpus > 16) {
                                fprintf(stderr, "tessera dev: --mock-gpus takes 0 to 16\n");
                                manager_release(&m);
                                return 2;
                        }
                        break;
                case 'M': snprintf(m.dev_agent.mock_gpu_memory, sizeof(m.dev_agent.mock_gpu_memory), "%s", optarg); break;
                case 'F': snprintf(m.dev_agent.fgpu_per_gpu, sizeof(m.dev_agent.fgpu_per_gpu), "%s", optarg); break;
                case 'W': snprintf(m.dev_agent.network, sizeof(m.dev_agent.network), "%s", optarg); break;
                case 'R': snprintf(m.dev_agent.runtime, sizeof(m.dev_agent.runtime), "%s", optarg); break;
                case 'h': usage_manager(stdout); manager_release(&m); return 0;
                default: usage_manager(stderr); manager_release(&m); return 2;
                }
                if (nover == (int)ARRAY_SIZE(over)) {
                        usage_manager(stderr);
                        manager_release(&m);
                        return 2;
                }
        }
        if (optind < argc || (!dev && !m.config_path && !print)) {
                usage_manager(stderr);
                manager_release(&m);
                return 2;
        }
        if (m.config_path) {
                r = conf_load_file(manager_conf_opts, &m.conf, m.config_path, &err);
                if (r < 0)
                        return finish(&m, r, err);
        }
        for (int i = 0; i < nover; i++) {
                r = conf_set(manager_conf_opts, &m.conf, over[i][0], over[i][1], &err);
                if (r < 0)
                        return finish(&m, r, err);
        }
        r = validate_conf(&m.conf, &err);
        if (r < 0)
                return finish(&m, r, err);
        if (print) {
                struct buf b = BUF_INIT;
                conf_print(manager_conf_opts, &m.conf, &b);
                fputs(b.data, stdout);
                buf_release(&b);
                return finish(&m, 0, NULL);
        }
        log_set_prefix(dev ? "tessera-dev" : "tessera-manager");
        if (gethostname(host, sizeof(host)) < 0)
                snprintf(host, sizeof(host), "dev");
        host[sizeof(host) - 1] = '\0';
        snprintf(m.dev_agent.id, sizeof(m.dev_agent.id), "%s", host);
        r = manager_run(&m, &err);
        return finish(&m, r, err);
}

int manager_main(int argc, char **argv)
{
        return common_main(argc, argv, false);
}

int dev_main(int argc, char **argv)
{
        return common_main(argc, argv, true);
}
