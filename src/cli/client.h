/* client.h - the HTTP side of the tessera client: where to connect, with
 * which keys, and requests signed exactly as Backend.AI's clients sign them.
 *
 * Endpoint: --endpoint, else $BACKEND_ENDPOINT or $TESSERA_ENDPOINT, else
 * the config file, else http://127.0.0.1:8090.  Keys: $BACKEND_ACCESS_KEY
 * and $BACKEND_SECRET_KEY (or the TESSERA_ aliases) as a pair, else the
 * config file that `tessera login` writes ($XDG_CONFIG_HOME/tessera/config
 * or ~/.config/tessera/config, mode 0600).
 *
 * Every request carries Date (ISO 8601, microseconds, +00:00),
 * X-BackendAI-Version, Content-Type (application/json with a body,
 * text/plain without) and Host as taken from the endpoint; signed requests
 * add Authorization over exactly the path and query sent.  One libcurl easy
 * handle serves the process (connections are reused).  The module prints
 * nothing: errors go up as struct tess_error. */
#ifndef TESS_CLI_CLIENT_H
#define TESS_CLI_CLIENT_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "common/buf.h"
#include "common/error.h"

/* ---- config file ---- */

struct cli_config {
        char *endpoint, *access_key, *secret_key; /* owned, NULL when absent */
};

/* The config file's path; caller frees.  -ENOENT if there is no home. */
int config_path(char **ret, struct tess_error **err);
/* Load it; a missing file leaves every field NULL and returns 0. */
int config_load(struct cli_config *ret, struct tess_error **err);
/* Write it atomically with mode 0600 (directory 0700). */
int config_save(const struct cli_config *c, struct tess_error **err);
/* Remove it: 1 when removed, 0 when there was none. */
int config_remove(struct tess_error **err);
void config_release(struct cli_config *c);

/* ---- requests ---- */

struct client_response {
        long status;
        struct buf headers; /* the status line and header lines as received */
        struct buf body;
        char *content_type; /* owned; NULL if none */
};
#define CLIENT_RESPONSE_INIT { .headers = BUF_INIT, .body = BUF_INIT }
void client_response_release(struct client_response *r);

enum client_auth {
        CLIENT_SIGNED,   /* sign; no keys is an error */
        CLIENT_UNSIGNED, /* never sign (GET /, /auth/authorize) */
        CLIENT_IF_KEYS,  /* sign when keys are known */
};

/* Use this endpoint instead of the environment's or the config's (NULL: no
 * override).  Must come before the first request. */
void client_set_endpoint(const char *endpoint);
/* The endpoint in use (resolving it if needed); NULL on error. */
const char *client_endpoint(struct tess_error **err);
/* True when $BACKEND_/$TESSERA_ACCESS_KEY or _SECRET_KEY is set. */
bool client_keys_from_env(void);
/* Free the handle and the resolved settings. */
void client_close(void);

/* Send one request.  path_query is sent and signed as given, except that
 * bytes a request line cannot carry (controls, space, '#', non-ASCII) are
 * percent-encoded first.  body NULL: no body.  Any HTTP status is a
 * success here; *ret is filled (release it even on failure). */
int client_send(const char *method, const char *path_query, const char *body, size_t body_len,
                enum client_auth auth, struct client_response *ret, struct tess_error **err);

/* POST files as multipart/form-data, as Backend.AI's client uploads into
 * a session: part "src" with filename remote[i] holds local[i]'s bytes. */
int client_upload(const char *path_query, const char *const *local, const char *const *remote, size_t n,
                  struct client_response *ret, struct tess_error **err);

/* A transfer to or from a token URL (vfolder uploads and downloads): never
 * signed; url is absolute ("http://...") or a path under the endpoint.
 * headers: extra "Name: value" lines, NULL-terminated (may be NULL).
 * out_fd >= 0: a 2xx answer's body is written there (other answers are
 * kept in ret->body for the error).  progress (may be NULL) is called with
 * the bytes sent and received so far, a few times a second. */
struct client_transfer {
        const char *const *headers;
        const char *body; /* NULL: none */
        size_t body_len;
        int out_fd;
        void (*progress)(void *arg, int64_t sent, int64_t received);
        void *arg;
};
int client_transfer(const char *method, const char *url, const struct client_transfer *t,
                    struct client_response *ret, struct tess_error **err);
/* A response header's value (the last of that name), or NULL; caller frees. */
char *client_response_header(const struct client_response *r, const char *name);

/* A JSON call: body may be NULL; a non-2xx answer is an error "<problem
 * title> (HTTP <status>)"; *ret (if ret is non-NULL) gets the parsed answer
 * (JSON null for an empty one). */
int client_json(const char *method, const char *path_query, const json_t *body, enum client_auth auth,
                json_t **ret, struct tess_error **err);

/* Turn a non-2xx answer into an error "<title> (HTTP <status>)". */
int client_status_error(const struct client_response *r, struct tess_error **err);

/* Server-sent events: GET path_query and call fn for each event (name
 * "message" when the stream names none) until fn returns > 0 (stop, 0 is
 * returned), < 0 (that error), or the stream ends (0). */
typedef int (*client_event_fn)(const char *event, const char *data, void *userdata, struct tess_error **err);
int client_events(const char *path_query, client_event_fn fn, void *userdata, struct tess_error **err);

/* ---- paths ---- */

/* Append "?k=v&..." for a JSON object of query values (strings, numbers,
 * booleans, lists joined with ','); nothing when it is empty. */
void client_query(struct buf *b, const json_t *query);

#endif
