/* pty_keep.h - terminals that outlive their WebSocket: the agent's
 * registry of named terminals (agent_pty.c attaches sockets to them).
 *
 * A terminal opened with a name (?terminal=ID) is registered here under
 * (kernel, ID).  While a socket is attached, its thread owns the terminal:
 * it reads the master and sends what it reads, and records it in the
 * terminal's scrollback ring too.  When the socket closes the terminal is
 * detached, not closed: the registry's keeper thread owns it then and goes
 * on draining the master into the ring (which drops its oldest bytes), so
 * the shell and its programs never block on a full terminal.  A socket
 * that attaches again under the same name gets the ring to replay, then
 * owns the terminal; if another socket holds it, that one is asked to let
 * go (it closes with "taken over") and the new one waits until it has.
 *
 * Detached terminals are closed (the master's close hangs the shell up)
 * after keep_usec, and past max_detached per kernel (the one detached
 * longest first).  A terminal whose shell ended (EOF or EIO on the master)
 * is closed by whoever owns it.  pty_keep_drop_kernel() closes a kernel's
 * terminals; an attached socket hears it through its wake fd.
 *
 * Lock: one mutex per registry guards the list, each terminal's state and
 * reference count.  The master and the ring belong to the owner: the
 * attached socket's thread (without the lock) or the keeper (under the
 * lock); ownership changes only under the lock, and only the owner gives
 * it up.  Nothing here logs. */
#ifndef TESS_PTY_KEEP_H
#define TESS_PTY_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/terminal_id.h"

#define PTY_KEEP_ID_MAX     TERMINAL_ID_MAX
#define PTY_KEEP_KERNEL_MAX 64
#define PTY_KEEP_RING       (64u << 10) /* scrollback kept per terminal */

/* ---- the scrollback ring ---- */

struct pty_ring {
        char *data;
        size_t cap, start, len;
        bool dropped; /* the oldest bytes were overwritten */
};

void pty_ring_init(struct pty_ring *r, size_t cap);
void pty_ring_release(struct pty_ring *r);
/* Append n bytes; beyond cap the oldest are dropped. */
void pty_ring_append(struct pty_ring *r, const void *p, size_t n);
/* The kept bytes, oldest first, into out (at least r->cap bytes); when
 * some were dropped it starts after the first newline of the first
 * PTY_RING_TRIM bytes, so that a replay begins with a whole line.
 * RET: how many bytes. */
#define PTY_RING_TRIM 4096
size_t pty_ring_copy(const struct pty_ring *r, char *out);

/* ---- the registry ---- */

struct pty_keep_conf {
        int64_t keep_usec;     /* how long a detached terminal lives; 0: closed when its socket closes */
        unsigned max_detached; /* per kernel */
        size_t ring;           /* scrollback bytes per terminal (0: PTY_KEEP_RING) */
};

struct pty_keep;
struct pty_term;

/* A socket's hold on a terminal (pty_keep_attach). */
struct pty_view {
        struct pty_keep *keep;
        struct pty_term *term; /* NULL once let go */
        uint64_t gen;
        bool kept; /* an existing terminal: its scrollback came with it */
};

enum pty_view_state {
        PTY_VIEW_OWNED,  /* go on */
        PTY_VIEW_TAKEN,  /* another socket took the terminal over: it is let go */
        PTY_VIEW_CLOSED, /* the terminal was closed (its kernel, the agent stopping): let go */
};

/* Start the keeper thread.  RET: NULL if the thread or its eventfd
 * cannot be made (errno). */
struct pty_keep *pty_keep_new(const struct pty_keep_conf *conf);
/* Stop the keeper and close every terminal (no socket may be attached
 * any more).  Accepts NULL; returns NULL. */
struct pty_keep *pty_keep_free(struct pty_keep *k);

/* Whether the kernel has a terminal named id now (it may end before an
 * attach; pty_keep_attach says for sure). */
bool pty_keep_has(struct pty_keep *k, const char *kernel, const char *id);

/* Attach the calling thread to the kernel's terminal named id, taking it
 * over from another socket if one holds it (waiting at most timeout_ms
 * for that one to let go).
 * IN/OUT fresh_fd - a new terminal's master, or -1: registered under id
 *        when there is none (made non-blocking), else closed; always
 *        taken (set to -1).
 * OUT ret - the hold; ret->kept: an existing terminal.
 * OUT ret_replay, ret_replay_len - its scrollback (caller frees; NULL
 *        for a new terminal).
 * RET: 0; -ENOENT when there is no such terminal and no fresh_fd (open
 *      one and call again); -EINVAL for a bad id (terminal_id_valid) or kernel; -EBUSY when
 *      the other socket did not let go in time; -ESHUTDOWN when stopping. */
int pty_keep_attach(struct pty_keep *k, const char *kernel, const char *id, int *fresh_fd, int timeout_ms,
                    struct pty_view *ret, char **ret_replay, size_t *ret_replay_len);

/* The master, while owned. */
int pty_view_fd(const struct pty_view *v);
/* Readable when pty_view_check() has news. */
int pty_view_wake_fd(const struct pty_view *v);
/* Record output read from the master (owner only). */
void pty_view_output(struct pty_view *v, const void *p, size_t n);
/* After the wake fd was readable: whether the hold goes on. */
enum pty_view_state pty_view_check(struct pty_view *v);
/* A new master in place of the old one ("restart"); the old is closed. */
void pty_view_replace_fd(struct pty_view *v, int fd);
/* The socket closed: keep the terminal, detached. */
void pty_view_detach(struct pty_view *v);
/* The shell ended: close the terminal. */
void pty_view_end(struct pty_view *v);

/* Close every terminal of a kernel. */
void pty_keep_drop_kernel(struct pty_keep *k, const char *kernel);
/* How many terminals the kernel has (*ret_detached: of them detached). */
unsigned pty_keep_count(struct pty_keep *k, const char *kernel, unsigned *ret_detached);

#endif
