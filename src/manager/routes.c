/* routes.c - the manager's route table: every route of the API, which
 * the dispatcher (dispatch.c) searches in order, and the tables it
 * searches (this one, the folders', the admin's).  The handlers are
 * declared by the part of the manager each belongs to. */
#include "common/compat.h"

#include "manager/accounts/model.h"
#include "manager/admin/admin.h"
#include "manager/agents/api_agent.h"
#include "manager/api/api.h"
#include "manager/api/web_session.h"
#include "manager/apps/app_proxy.h"
#include "manager/images/api_images.h"
#include "manager/main.h"
#include "manager/scheduler/scheduler.h"
#include "manager/sessions/api_session.h"
#include "manager/sessions/session_commit.h"
#include "manager/tasks/bgtask.h"
#include "manager/usage/usage.h"
#include "manager/vfolder/api_vfolder.h"

/* The app proxy takes every method the apps use (HEAD goes with GET). */
#define APP_PROXY_ROUTE(method)                                                                                   \
        { method, "/apps/{session}/{path}", api_apps_proxy, ROUTE_PUBLIC | ROUTE_TAIL | ROUTE_STREAM | ROUTE_APP, \
          "App proxy: a request to an app in a session, with the app's cookie (HTTP and WebSocket)", "apps" }

const struct route api_routes[] = {
        { "GET", "/", api_root_version, ROUTE_PUBLIC | ROUTE_READ,
          "API and manager version (a browser asking for text/html gets the web UI)", "meta" },
        { "GET", "/ui/{path}", api_web_static, ROUTE_PUBLIC | ROUTE_READ | ROUTE_TAIL, "The web UI's files", "meta" },
        { "POST", "/server/login", api_web_login, ROUTE_PUBLIC,
          "Web UI: log in with email and password; a session cookie", "auth" },
        { "GET", "/server/session", api_web_session, ROUTE_PUBLIC | ROUTE_READ, "Web UI: the logged-in user",
          "auth" },
        { "POST", "/server/logout", api_web_logout, ROUTE_PUBLIC, "Web UI: log out", "auth" },
        { "GET", "/health", api_health, ROUTE_PUBLIC | ROUTE_READ,
          "Can this manager serve: 200 when its database answers, else 503 (for load balancers)", "meta" },
        { "GET", "/metrics", api_metrics, ROUTE_PUBLIC | ROUTE_READ, "Prometheus metrics", "meta" },
        { "GET", "/openapi.json", api_openapi, ROUTE_PUBLIC | ROUTE_READ, "This OpenAPI document", "meta" },
        { "POST", "/auth/authorize", api_auth_authorize, ROUTE_PUBLIC, "Log in with a password, get the keypair",
          "auth" },
        { "GET", "/auth/role", api_auth_role, ROUTE_READ, "The caller's role", "auth" },
        { "POST", "/auth/update-password", api_auth_update_password, ROUTE_SELF, "Change the caller's password",
          "auth" },
        { "POST", "/agent/heartbeat", api_agent_heartbeat, ROUTE_AGENT,
          "Agents: register and report liveness (signed with the cluster secret)", "agent" },
        { "POST", "/agent/sync", api_agent_sync, ROUTE_AGENT,
          "Agents: the kernels this agent should run or stop (a long poll)", "agent" },
        { "POST", "/agent/events", api_agent_events, ROUTE_AGENT,
          "Agents: report kernel events (running, exited, failed); answers the last sequence applied", "agent" },
        { "POST", "/admin/gql", api_admin_gql, ROUTE_READ,
          "Backend.AI's GraphQL queries: keypair, compute_session_list, compute_session, vfolder_list, images, image, "
          "user, the admin lists (user_list, keypair_list, domains, groups, scaling_groups, "
          "keypair_resource_policies), keypair_resource_policy, agent_list, agents, agent, storage_volume_list, "
          "storage_volume",
          "admin" },
        { "GET", "/config/resource-slots", api_config_resource_slots, ROUTE_READ,
          "The resource slots sessions may ask for: {slot: \"count\" or \"bytes\"}", "config" },
        { "GET", "/config/vfolder-types", api_vfolder_allowed_types, ROUTE_READ,
          "Folder ownership types (the same as /folders/_/allowed-types)", "config" },
        { "GET", "/config/docker-registries", api_config_docker_registries, ROUTE_SUPERADMIN | ROUTE_READ,
          "The registries images are scanned from: {name: url}", "config" },
        { "GET", "/manager/announcement", api_manager_announcement_get, ROUTE_READ,
          "The announcement every client shows: {enabled, message}", "manager" },
        { "POST", "/manager/announcement", api_manager_announcement_set, ROUTE_SUPERADMIN,
          "Post ({enabled: true, message}) or take down ({enabled: false}) the announcement", "manager" },
        { "GET", "/manager/status", api_manager_status_get, ROUTE_SUPERADMIN | ROUTE_READ,
          "The service's status (running or frozen) and its active sessions", "manager" },
        { "PUT", "/manager/status", api_manager_status_set, ROUTE_SUPERADMIN,
          "Freeze the service for maintenance (no new sessions or folders; force_kill ends every session) or "
          "unfreeze it",
          "manager" },
        { "POST", "/session", api_session_create, ROUTE_CREATES, "Create (or get) a compute session", "session" },
        { "POST", "/session/_/create", api_session_create, ROUTE_CREATES, "Create (or get) a compute session",
          "session" },
        { "GET", "/sessions", api_session_list, ROUTE_READ, "List sessions with filters and paging", "session" },
        { "GET", "/session/{name}", api_session_info, ROUTE_READ, "Session information", "session" },
        { "DELETE", "/session/{name}", api_session_destroy, 0, "Destroy a session (PENDING: cancel)", "session" },
        { "PATCH", "/session/{name}", api_session_restart, 0,
          "Restart a running session: its processes end and it starts over in the same containers (204)",
          "session" },
        { "GET", "/session/{name}/logs", api_session_logs, ROUTE_READ,
          "Container logs of a session (as {result: {logs}}; _ with ?taskId=ID: Backend.AI's task logs, as text)",
          "session" },
        { "POST", "/session/{name}/rename", api_session_rename, 0,
          "Rename a session that has not ended (?name= or {name})", "session" },
        { "POST", "/session/{name}/commit", api_session_commit, 0,
          "Commit a running session to a private image (a background task)", "session" },
        { "GET", "/session/{name}/commit", api_session_commit_status, ROUTE_READ, "The last commit of a session",
          "session" },
        { "POST", "/session/{name}", api_session_execute, 0,
          "Execute code (query) or a command (batch) in a running session", "session" },
        { "POST", "/session/{name}/interrupt", api_session_interrupt, 0, "Interrupt what a session executes",
          "session" },
        { "POST", "/session/{name}/complete", api_session_complete, 0,
          "Completions for code in a running session ({code, options}; Python query sessions)", "session" },
        { "POST", "/session/{name}/upload", api_session_upload, ROUTE_UPLOAD,
          "Upload files (multipart/form-data) into a session's home directory", "session" },
        { "POST", "/session/{name}/download_single", api_session_download_single, 0,
          "Download one file of a session", "session" },
        { "GET", "/session/{name}/download_single", api_session_download_single, 0,
          "Download one file of a session", "session" },
        { "GET", "/session/{name}/download", api_session_download, 0,
          "Download files and directories of a session ({files: [PATH...]}): multipart/mixed, a tar per path",
          "session" },
        { "GET", "/session/{name}/files", api_session_files, 0, "List a directory of a session", "session" },
        { "GET", "/stream/session/{name}/execute", api_stream_execute, 0,
          "Run code in a running session, streamed (WebSocket: {code, mode, options}, then results and input)",
          "session" },
        { "GET", "/stream/session/{name}/apps", api_session_apps_list, ROUTE_READ,
          "The apps a running session offers: [{name, protocol, ports}]", "session" },
        { "GET", "/stream/session/{name}/pty", api_stream_pty, 0, "A terminal in a running session (WebSocket)",
          "session" },
        { "POST", "/session/{name}/start-service", api_session_start_service, 0,
          "Start an app the session's image declares (ai.backend.service-ports): a short-lived token and the "
          "URL that opens it through the app proxy",
          "session" },
        { "POST", "/session/{name}/shutdown-service", api_session_shutdown_service, 0,
          "Stop an app of the session (service_name): its process ends, its links and cookies stop working",
          "session" },
        { "GET", "/server/app-login", api_app_login, ROUTE_PUBLIC | ROUTE_READ,
          "Web UI: an app link's check of the browser's login (from the app origin); back there with a one-time "
          "code",
          "apps" },
        { "GET", "/apps/_/open", api_apps_open, ROUTE_PUBLIC | ROUTE_READ | ROUTE_APP,
          "App proxy (app origin only): a start-service link (?token=) goes by the web UI's login check "
          "(/server/app-login), whose one-time code (?code=) gives the app's cookie",
          "apps" },
        APP_PROXY_ROUTE("GET"),
        APP_PROXY_ROUTE("POST"),
        APP_PROXY_ROUTE("PUT"),
        APP_PROXY_ROUTE("PATCH"),
        APP_PROXY_ROUTE("DELETE"),
        APP_PROXY_ROUTE("OPTIONS"),
        { "GET", "/events/session", api_events_session, ROUTE_READ, "Session events (server-sent events)",
          "session" },
        { "GET", "/events/background-task", api_events_bgtask, ROUTE_READ,
          "A background task's progress and end (server-sent events)", "session" },
        { "GET", "/background-tasks/{id}", api_bgtask_show, ROUTE_READ, "A background task (commit, rescan)",
          "session" },
        { "GET", "/images", api_images_list, ROUTE_READ,
          "The images the caller may use, grouped by name with their versions and aliases", "image" },
        { "GET", "/resource/presets", api_resource_presets, ROUTE_READ, "Resource presets", "resource" },
        { "GET", "/projects", api_projects_list, ROUTE_READ, "The projects the caller may start sessions in",
          "resource" },
        { "GET", "/scaling-groups", api_scaling_groups, ROUTE_READ,
          "The resource groups the caller may use in a project (?group=)", "resource" },
        { "POST", "/resource/check-presets", api_resource_check_presets, ROUTE_READ,
          "Limits, usage and remaining resources; which presets fit", "resource" },
        { "GET", "/resource/usage/period", api_usage_period, ROUTE_READ,
          "Usage per project and session over days, allocated and measured (start_date, end_date, project_id)", "resource" },
        { "GET", "/resource/usage/month", api_usage_month, ROUTE_SUPERADMIN | ROUTE_READ,
          "The sessions that used resources in a month (month=YYYYMM, group_ids), as usage/period's c_infos",
          "resource" },
        { "GET", "/resource/stats/user/month", api_usage_user_month, ROUTE_READ,
          "The caller's usage on each of the last 30 days, allocated and measured", "resource" },
        { "GET", "/admin/image-blobs/{digest}", api_image_blob_show, ROUTE_SUPERADMIN | ROUTE_READ,
          "Image import: whether a blob is in the manager, or where its upload resumes", "admin" },
        { "PATCH", "/admin/image-blobs/{digest}", api_image_blob_append, ROUTE_SUPERADMIN | ROUTE_UPLOAD,
          "Image import: one chunk of a blob (raw bytes) at ?offset=", "admin" },
        { "PUT", "/admin/image-blobs/{digest}", api_image_blob_finish, ROUTE_SUPERADMIN | ROUTE_UPLOAD,
          "Image import: the last chunk of a blob at ?offset=; verified against the digest and kept", "admin" },
        { "POST", "/admin/image-imports", api_image_import, ROUTE_SUPERADMIN,
          "Image import: register an uploaded image {reference, manifest} for every agent", "admin" },
        { "GET", "/v2/{path}", api_registry_get, ROUTE_AGENT | ROUTE_READ | ROUTE_TAIL,
          "Agents: imported images as an OCI registry (manifests and blobs)", "agent" },
        { "POST", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_TAIL,
          "Agents: start a blob upload (session commits)", "agent" },
        { "PATCH", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_UPLOAD | ROUTE_TAIL,
          "Agents: a chunk of a blob upload", "agent" },
        { "PUT", "/v2/{path}", api_registry_push, ROUTE_AGENT | ROUTE_UPLOAD | ROUTE_TAIL,
          "Agents: finish a blob upload, or put a manifest", "agent" },
        { "GET", "/admin/usage", api_usage_admin, ROUTE_ADMIN | ROUTE_READ,
          "Usage per user, project or domain per day, allocated and measured (start_date, end_date, group_by)", "admin" },
        {},
};

const struct route *const api_route_tables[] = { api_routes, vfolder_routes, admin_routes, NULL };
