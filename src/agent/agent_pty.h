/* agent_pty.h - a kernel's terminal over a WebSocket (agent_pty.c). */
#ifndef TESS_AGENT_PTY_H
#define TESS_AGENT_PTY_H

#include <limits.h>
#include <sys/types.h>

#include "agent/pty_keep.h"
#include "agent/runner_client.h"

/* The close code of a socket whose named terminal another socket took
 * over (one viewer at a time); its reason says so. */
#define AGENT_PTY_CLOSE_TAKEN 4001
/* How long a socket waits for the one it takes a terminal from to let go. */
#define AGENT_PTY_TAKEOVER_MS 5000

struct agent_pty {
        char socket_path[PATH_MAX]; /* the kernel's runner */
        pid_t runner_pid;
        unsigned rows, cols;
        bool size_given; /* rows and cols came with the request: a kept terminal takes them */
        int fd;          /* a new terminal's master, until it is registered; -1 when none */
        /* a named terminal (?terminal=ID), kept between sockets; keep NULL: none */
        struct pty_keep *keep;
        char kernel[PTY_KEEP_KERNEL_MAX + 1];
        char id[PTY_KEEP_ID_MAX + 1];
        struct pty_view view; /* the hold on it while the socket lasts */
};

/* Open a shell on a new terminal through the runner (t->fd). */
int agent_pty_open(struct agent_pty *t, struct tess_error **err);
/* Relay between the terminal and the WebSocket on sock (prefix: bytes
 * already read from it) until either ends; blocks.  A named terminal is
 * attached first (a new one registered, a kept one replayed) and left
 * detached, still running, when the socket ends. */
void agent_pty_run(struct agent_pty *t, int sock, const void *prefix, size_t prefix_len);
void agent_pty_close(struct agent_pty *t);

#endif
