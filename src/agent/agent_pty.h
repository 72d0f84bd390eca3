/* agent_pty.h - a kernel's terminal over a WebSocket (agent_pty.c). */
#ifndef TESS_AGENT_PTY_H
#define TESS_AGENT_PTY_H

#include <limits.h>
#include <sys/types.h>

#include "runner_client.h"

struct agent_pty {
        char socket_path[PATH_MAX]; /* the kernel's runner */
        pid_t runner_pid;
        unsigned rows, cols;
        int fd; /* the terminal's master; -1 when none */
};

/* Open a shell on a new terminal through the runner (t->fd). */
int agent_pty_open(struct agent_pty *t, struct tess_error **err);
/* Relay between the terminal and the WebSocket on sock (prefix: bytes
 * already read from it) until either ends; blocks. */
void agent_pty_run(struct agent_pty *t, int sock, const void *prefix, size_t prefix_len);
void agent_pty_close(struct agent_pty *t);

#endif
