/* test_http_head.c - answer heads read for protocol upgrades, and the
 * raw relay that follows them (common/http_head.c, common/relay.c). */
#include "common/compat.h"

#include <sys/socket.h>

#include "../lib/test.h"
#include "common/http_head.h"
#include "common/relay.h"

static int parse(const char *text, struct http_head *h)
{
        struct tess_error *err = NULL;
        int r = http_head_parse(text, strlen(text), h, &err);

        CHECK((r < 0) == (err != NULL));
        tess_error_free(err);
        return r;
}

static void test_parse(void)
{
        struct http_head h;
        const struct str *v;

        CHECK(parse("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nSec-WebSocket-Accept:  abc= \r\n\r\n",
                    &h) == 0);
        CHECK(h.status == 101 && h.nfields == 2);
        CHECK(h.reason.len == 19 && strncmp(h.reason.p, "Switching Protocols", 19) == 0);
        v = http_head_get(&h, "sec-websocket-accept");
        CHECK(v && v->len == 4 && strncmp(v->p, "abc=", 4) == 0);
        CHECK(http_head_get(&h, "Connection") == NULL);
        CHECK(parse("HTTP/1.0 404\r\n\r\n", &h) == 0 && h.status == 404 && h.reason.len == 0);
}

static void test_refused(void)
{
        static const char *const bad[] = {
                "HTTP/1.1 101 OK\r\n",                    /* no empty line */
                "HTTP/2 200 OK\r\n\r\n",                  /* not 1.x */
                "HTTP/1.1 99 x\r\n\r\n",                  /* status */
                "HTTP/1.1 200 OK\r\n folded\r\n\r\n",     /* folding */
                "HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",    /* not a field */
                "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", /* a blank in a name */
                "HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",     /* bare CR */
                "HTTP/1.1 200 OK\r\n\r\nX: y\r\n\r\n",    /* an empty line inside */
        };
        struct http_head h;

        for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
                CHECK(parse(bad[i], &h) == -EINVAL);
}

static void test_read(void)
{
        int sv[2];
        struct buf in = BUF_INIT;
        struct tess_error *err = NULL;
        const char *answer = "HTTP/1.1 101 X\r\nUpgrade: t\r\n\r\nafter";

        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
        CHECK(write(sv[1], answer, strlen(answer)) == (ssize_t)strlen(answer));
        CHECK(http_head_read(sv[0], 1000, &in, &err) == (int)strlen(answer) - 5);
        CHECK(in.len == strlen(answer));
        buf_reset(&in);
        CHECK(http_head_read(sv[0], 50, &in, &err) == -ETIMEDOUT);
        err = tess_error_free(err);
        close(sv[1]);
        CHECK(http_head_read(sv[0], 1000, &in, &err) == -ECONNRESET);
        tess_error_free(err);
        close(sv[0]);
        buf_release(&in);
}

/* Both directions, pending bytes first, half-closes passed on. */
static void test_relay(void)
{
        int a[2], b[2];
        char got[64];
        ssize_t n;

        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
        CHECK(write(a[1], "to-b", 4) == 4);
        CHECK(write(b[1], "to-a", 4) == 4);
        shutdown(a[1], SHUT_WR);
        shutdown(b[1], SHUT_WR);
        struct relay_side sa = { .fd = a[0], .pending = "pa:", .pending_len = 3 };
        struct relay_side sb = { .fd = b[0], .pending = "pb:", .pending_len = 3 };
        CHECK(relay_run(&sa, &sb, NULL, NULL) == 0);
        n = read(b[1], got, sizeof(got));
        CHECK(n == 7 && memcmp(got, "pb:to-b", 7) == 0);
        CHECK(read(b[1], got, sizeof(got)) == 0); /* a's end, passed on */
        n = read(a[1], got, sizeof(got));
        CHECK(n == 7 && memcmp(got, "pa:to-a", 7) == 0);
        CHECK(read(a[1], got, sizeof(got)) == 0);
        for (int i = 0; i < 2; i++) {
                close(a[i]);
                close(b[i]);
        }
}

static const struct test tests[] = {
        TEST(test_parse), TEST(test_refused), TEST(test_read), TEST(test_relay), {},
};

int main(void)
{
        return test_main(tests);
}
