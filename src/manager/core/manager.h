/* manager.h - the manager process: its configuration and shared state.
 *
 * One struct manager lives for the life of the process; the event loop,
 * the database connection, the HTTP server and the in-process event bus
 * hang off it.  Everything durable is in the database. */
#ifndef TESS_MANAGER_H
#define TESS_MANAGER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/conf.h"
#include "common/crypto.h"
#include "common/error.h"
#include "common/vfolder_hosts.h"

struct loop;
struct db;
struct http_server;
struct events;
struct cluster_events;
struct metrics;
struct ratelimit;
struct auth_cache;
struct held_conns;
struct audit;
struct scheduler;
struct blob_store;
struct route;

struct manager_conf {
        char *listen;
        char *app_listen; /* the app proxy's own listener, or NULL: no apps (never under listen) */
        char *web_url;    /* the web UI's URL for browsers, or NULL (app_origin.h) */
        char *app_url;    /* the app proxy's URL for browsers, "*." for a host per session, or NULL */
        char *database;
        int64_t database_wait; /* at start, for a database not reachable yet */
        char *state_dir;
        char *master_key_file;
        char *cluster_secret_file;
        char *log_level;
        char *sqlite_sync;
        uint64_t max_body;
        uint64_t max_upload;
        uint64_t max_inflight;            /* body bytes held at once (http.h) */
        uint64_t max_inflight_per_client; /* the same for one client address */
        uint64_t max_spool;               /* upload bodies on disk (http.h spool_dir) */
        uint64_t max_spool_per_client;
        uint64_t max_json_depth;
        uint64_t max_string_len;
        uint64_t max_page_size;
        uint64_t max_connections;
        char *trusted_proxies; /* fronts whose X-Forwarded-For names the client (http.h) */
        char *public_hosts;    /* names signed requests may be made for (public_hosts.h) */
        int64_t rate_limit_window;
        int64_t session_wait_default;
        int64_t auth_cache_ttl;
        bool audit_reads;
        int64_t scheduler_interval;
        int64_t agent_lost_timeout;
        char *vfolder_hosts;
        char *vfolder_default_host;
        char *web_dir;
        int64_t task_lease;
        int64_t vfolder_upload_keep; /* partial uploads idle this long are removed (0: never) */
        int64_t app_token_ttl;  /* the app proxy (app_token.h) */
        int64_t app_cookie_ttl;
        bool terminate_inactive_users; /* an inactive user's sessions end (scheduler_reaper.c) */
};

struct manager {
        struct manager_conf conf;
        char *config_path; /* NULL for tessera dev without --config */
        const struct route *const *routes; /* the tables the dispatcher searches (api_route_tables, main.h) */
        struct loop *loop;
        struct db *db;
        struct http_server *http;
        struct http_server *app_http; /* conf.app_listen's, or NULL */
        struct events *events;
        struct cluster_events *cluster_events; /* PostgreSQL: the bus shared with the other managers (../main.h) */
        struct metrics *metrics;
        struct ratelimit *ratelimit;
        struct auth_cache *authcache;
        struct held_conns *held; /* terminals, app WebSockets, event streams (held_conn.h) */
        struct public_hosts *public_hosts; /* conf.public_hosts, parsed (api/public_hosts.h) */
        struct login_guard *login_guard; /* failed web logins (web_session.h) */
        struct audit *audit;
        struct scheduler *scheduler;
        struct agent_sync *agent_sync;
        struct blob_store *blobs; /* imported images' blobs, state_dir/images (blob_store.h) */
        struct vf_hosts vfolder_hosts; /* storage hosts of virtual folders (vfolder.h) */
        unsigned char master_key[MASTER_KEY_LEN];
        char cluster_secret[2 * MASTER_KEY_LEN + 1]; /* hex: the HMAC key agents share */
        int64_t started_at;
        struct { /* the frozen state, as last read (api/server_state.h) */
                bool frozen;
                int64_t checked_at; /* monotonic; 0: never */
        } server_state;
        bool dev;
        struct {                /* tessera dev's agent (dev_agent.c) */
                bool enabled;
                pid_t pid;
                char id[64];
                int mock_gpus;
                char mock_gpu_memory[32];
                char fgpu_per_gpu[32];
                char network[16];
                char runtime[256]; /* the agent's option runc */
        } dev_agent;
};

#endif
