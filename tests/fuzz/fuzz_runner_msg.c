/* fuzz_runner_msg.c - the runner's protocol parser (src/runner/msg.c, the
 * bytes tessera-runner reads from its socket), included whole.  The input
 * is one request line.  Invariants: a request that validates has a known
 * op, NUL-free strings of the lengths the parser reports, paths without
 * '..' or a leading '/', bounded argv/env and numbers in their ranges;
 * any JSON value written back by the writer parses again and writes the
 * same bytes; the writer's string escaping always yields valid JSON; the
 * UTF-8 holdback never keeps more than 3 bytes. */
#include "common/compat.h"

#include "fuzz.h"
#include "runner/msg.c"

static void write_node(struct rbuf *b, const struct rmsg_doc *d, int i)
{
        const struct rmsg_node *n = &d->nodes[i];
        bool first = true;

        switch (n->type) {
        case RMSG_NULL: rbuf_puts(b, "null"); break;
        case RMSG_BOOL: rbuf_puts(b, n->b ? "true" : "false"); break;
        case RMSG_NUMBER: rbuf_append(b, n->s, n->len); break;
        case RMSG_STRING: rbuf_json_str(b, n->s, n->len); break;
        case RMSG_ARRAY:
        case RMSG_OBJECT:
                rbuf_puts(b, n->type == RMSG_ARRAY ? "[" : "{");
                for (int c = n->child; c >= 0; c = d->nodes[c].next) {
                        rbuf_puts(b, first ? "" : ",");
                        first = false;
                        write_node(b, d, c);
                        if (n->type == RMSG_OBJECT) {
                                rbuf_puts(b, ":");
                                c = d->nodes[c].next;
                                write_node(b, d, c);
                        }
                }
                rbuf_puts(b, n->type == RMSG_ARRAY ? "]" : "}");
                break;
        }
}

static void check_request(const struct rmsg_req *r)
{
        FUZZ_ASSERT(r->op < _RMSG_OP_MAX);
        if (r->code)
                FUZZ_ASSERT(strlen(r->code) == r->code_len);
        if (r->path) {
                FUZZ_ASSERT(r->path[0] != '/' && rmsg_path_check(r->path, true));
                FUZZ_ASSERT(strcmp(r->path, "..") && strncmp(r->path, "../", 3) && !strstr(r->path, "/../"));
        }
        if (r->run_id)
                FUZZ_ASSERT(strlen(r->run_id) >= 1 && strlen(r->run_id) <= RMSG_RUNID_MAX &&
                            strspn(r->run_id, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._:-") ==
                                    strlen(r->run_id));
        if (r->name)
                FUZZ_ASSERT(strlen(r->name) >= 1 && strlen(r->name) <= RMSG_NAME_MAX);
        FUZZ_ASSERT(r->argc >= 0 && r->argc <= RMSG_ARGV_MAX && !r->argv[r->argc]);
        FUZZ_ASSERT(r->envc >= 0 && r->envc <= RMSG_ARGV_MAX && !r->env[r->envc]);
        for (int i = 0; i < r->envc; i++)
                FUZZ_ASSERT(strchr(r->env[i], '=') > r->env[i]);
        FUZZ_ASSERT(r->rows >= 1 && r->rows <= 4096 && r->cols >= 1 && r->cols <= 4096);
        FUZZ_ASSERT(r->port >= -1 && r->port <= 65535 && r->perm >= -1 && r->perm <= 07777);
        FUZZ_ASSERT(r->wait_ms >= -1 && r->wait_ms <= RMSG_WAIT_MAX_MS);
        if (r->op == RMSG_OP_UPLOAD)
                FUZZ_ASSERT(r->size >= 0 && rmsg_path_check(r->path, false));
        if (r->op == RMSG_OP_EXEC)
                FUZZ_ASSERT(r->mode != RMSG_MODE_NONE);
        if (r->op == RMSG_OP_EXEC && (r->mode == RMSG_MODE_CONTINUE || r->mode == RMSG_MODE_INPUT))
                FUZZ_ASSERT(r->run_id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct rmsg_doc doc = RMSG_DOC_INIT, doc2 = RMSG_DOC_INIT;
        struct rmsg_req *req = xmalloc(sizeof(*req));
        struct rbuf a = RBUF_INIT, b = RBUF_INIT, s = RBUF_INIT;
        const char *err = NULL;
        char *line = fuzz_strndup(data, size);
        size_t keep;

        if (rmsg_req_parse(&doc, line, size, req, &err) == 0)
                check_request(req);
        else
                FUZZ_ASSERT(err);
        free(line);

        line = fuzz_strndup(data, size);
        if (rmsg_parse(&doc, line, size, &err) == 0) {
                write_node(&a, &doc, 0);
                char *again = fuzz_strndup(a.data, a.len);
                FUZZ_ASSERT(rmsg_parse(&doc2, again, a.len, &err) == 0);
                write_node(&b, &doc2, 0);
                FUZZ_ASSERT(a.len == b.len && memcmp(a.data, b.data, a.len) == 0);
                free(again);
        }
        free(line);

        /* any bytes, escaped, are one valid JSON string (that the runner's
         * own reader takes back unless it holds a NUL, which it refuses) */
        rbuf_json_str(&s, (const char *)data, size);
        line = fuzz_strndup(s.data, s.len);
        if (!memchr(data, 0, size))
                FUZZ_ASSERT(rmsg_parse(&doc2, line, s.len, &err) == 0 && doc2.nodes[0].type == RMSG_STRING);
        free(line);
        keep = rmsg_utf8_prefix((const char *)data, size);
        FUZZ_ASSERT(keep <= size && size - keep <= 3);

        rbuf_release(&a);
        rbuf_release(&b);
        rbuf_release(&s);
        rmsg_doc_release(&doc);
        rmsg_doc_release(&doc2);
        free(req);
        return 0;
}
