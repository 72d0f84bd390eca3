/* terminal_id.h - the name a client gives a terminal it wants kept
 * between sockets: ?terminal=ID on the terminal WebSocket
 * (src/manager/sessions/api_stream_pty.c checks it and passes it on, the agent
 * keeps terminals by kernel and ID: src/agent/pty_keep.h).  The ID is
 * only ever looked up, never trusted for anything else. */
#ifndef TESS_TERMINAL_ID_H
#define TESS_TERMINAL_ID_H

#include <stdbool.h>
#include <string.h>

#define TERMINAL_ID_MIN 8
#define TERMINAL_ID_MAX 64

/* 8-64 of [A-Za-z0-9_-]. */
static inline bool terminal_id_valid(const char *id)
{
        size_t n = id ? strlen(id) : 0;

        if (n < TERMINAL_ID_MIN || n > TERMINAL_ID_MAX)
                return false;
        for (const char *p = id; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' ||
                      *p == '-'))
                        return false;
        return true;
}

#endif
