/* stream_ws.h - a WebSocket into a running session (its terminal, its
 * streamed execution), served by a thread of its own.
 *
 * The handler checks the upgrade and finds the session's main kernel
 * (stream_ws_accept), then answers 101; the thread runs `run` with the
 * client's socket.  The loop only records the owner's activity (what the
 * thread reports with stream_ws_touch keeps the session from the idle
 * timeout) and closes the client's connection when `run` returns, both
 * through one pipe.  The socket is held (held_conn.h): when the credential
 * that opened it is revoked, stream_ws_revoked() turns true and `run`
 * must close the client's socket (1008) and end. */
#ifndef TESS_MANAGER_STREAM_WS_H
#define TESS_MANAGER_STREAM_WS_H

#include <stdbool.h>
#include <stdint.h>

#include "common/buf.h"
#include "manager/api/held_conn.h"
#include "manager/sessions/api_session.h"

struct api_ctx;
struct http_upgraded;

struct stream_ws {
        struct manager *m;
        struct session_target t; /* the session's main kernel and its agent */
        char secret[160];        /* the cluster secret, to sign requests to the agent */
        int fd;                  /* the client's socket, once upgraded */
        struct buf extra;        /* bytes that came with the upgrade */
        void (*run)(struct stream_ws *s);
        void *data; /* run's; freed with data_free */
        void (*data_free)(void *data);
        /* private */
        struct http_upgraded *u;
        int64_t last_touch;
        struct held_cred cred;
        uint64_t held;
        int revoked; /* __atomic */
};

/* Answer c: 400 or 426 for a request that is not a WebSocket upgrade, 404
 * or 409 when c->param[0] names no running session of the caller's (or of
 * owner_access_key, for admins), else 101 and `run` in a thread.  data
 * (freed with data_free) is run's, also when c is answered otherwise. */
void stream_ws_accept(struct api_ctx *c, const char *what, void (*run)(struct stream_ws *s), void *data,
                      void (*data_free)(void *data));

/* From run: the owner is active (at most one write every few seconds). */
void stream_ws_touch(struct stream_ws *s);
/* From run: has the credential that opened the socket been revoked? */
bool stream_ws_revoked(struct stream_ws *s);

#endif
