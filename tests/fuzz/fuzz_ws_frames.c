/* fuzz_ws_frames.c - WebSocket frames from a client, as the manager's and
 * the agent's terminal endpoints read them (ws.c over wslay): any bytes
 * end in messages within the size limit, or a failed connection, never
 * more. */
#include "common/compat.h"

#include <poll.h>
#include <sys/socket.h>

#include "common/ws.h"
#include "fuzz.h"

static int on_message(struct ws *w UNUSED, int opcode, const uint8_t *msg UNUSED, size_t len, void *data)
{
        size_t *count = data;
        FUZZ_ASSERT(opcode == WS_TEXT || opcode == WS_BINARY);
        FUZZ_ASSERT(len <= WS_MESSAGE_MAX);
        (*count)++;
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        int sv[2];
        size_t count = 0;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return 0;
        close(sv[1]); /* the peer sent exactly these bytes, then went away */
        struct ws *w = ws_new(sv[0], true, data, size, on_message, &count);
        FUZZ_ASSERT(w != NULL);
        for (int i = 0; i < 64 && !ws_done(w); i++)
                if (ws_pump(w, POLLIN | POLLOUT) < 0)
                        break;
        FUZZ_ASSERT(count <= size / 2 + 1); /* a message takes a 2-byte header at least */
        ws_free(w);
        close(sv[0]);
        return 0;
}
