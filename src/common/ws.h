/* ws.h - WebSocket connections over a socket the caller owns, for the
 * terminal relays (the manager's /stream routes and the agent's).  Frames
 * are wslay's; this adds the opening handshake's keys, a blocking client
 * handshake, and a poll-driven pump for one thread.
 *
 * A connection is driven by its owner's loop: poll the fd for
 * ws_poll_events(), then call ws_pump() with what came; messages arrive
 * through the callback; ws_done() says when both sides have closed (or the
 * peer is gone).  Sockets are made non-blocking. */
#ifndef TESS_WS_H
#define TESS_WS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"
#include "common/error.h"

#define WS_ACCEPT_LEN  28 /* base64 of a SHA-1 */
#define WS_MESSAGE_MAX (1u << 20)
#define WS_TEXT        0x1
#define WS_BINARY      0x2

struct ws;
/* A whole message (text or binary); return < 0 to fail the connection. */
typedef int (*ws_message_fn)(struct ws *w, int opcode, const uint8_t *msg, size_t len, void *data);

/* server: the accepting side (frames unmasked); prefix: bytes already read
 * from fd that belong to the WebSocket stream. */
struct ws *ws_new(int fd, bool server, const void *prefix, size_t prefix_len, ws_message_fn fn, void *data);
void ws_free(struct ws *w); /* does not close fd */

int ws_send(struct ws *w, int opcode, const void *msg, size_t len);
/* Start the closing handshake (code 1000: normal). */
void ws_close(struct ws *w, uint16_t code, const char *reason);
/* The status code of the peer's close frame (1005: one without a code), 0
 * while none came (or the connection dropped without one); *ret_reason:
 * its reason ("" if none), valid as long as w. */
uint16_t ws_close_received(const struct ws *w, const char **ret_reason);
/* POLLIN and/or POLLOUT to wait for; 0 when there is nothing left to do. */
short ws_poll_events(struct ws *w);
/* Read and write what poll said is possible; < 0: the connection failed.
 * ws_pump(w, 0) reads the prefix given to ws_new: call it once when ready
 * for messages, since poll says nothing about bytes already read. */
int ws_pump(struct ws *w, short revents);
bool ws_done(struct ws *w);
int ws_fd(const struct ws *w);

/* Sec-WebSocket-Accept for a Sec-WebSocket-Key (RFC 6455 §4.2.2). */
void ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1]);
/* A fresh random Sec-WebSocket-Key. */
void ws_client_key(char out[25]);

/* Client side: send "GET target" with the upgrade headers and extra
 * header lines ("Name: value", NULL-terminated), wait (timeout_ms) for a
 * 101 with the right Sec-WebSocket-Accept.  Bytes after the answer's head
 * go to *leftover (feed them to ws_new as its prefix).  A non-101 answer
 * is an error carrying its status line and body. */
int ws_client_handshake(int fd, const char *host, const char *target, const char *const *headers, int timeout_ms,
                        struct buf *leftover, struct tess_error **err);

#endif
