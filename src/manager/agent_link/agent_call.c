/* agent_call.c - see agent_call.h.  Each call runs in a worker thread
 * (worker.h) whose end comes back to the loop thread, so that everything
 * but the HTTP exchange happens there (the reference count included). */
#include "common/compat.h"

#include <curl/curl.h>
#include <jansson.h>
#include <signal.h>
#include <unistd.h>

#include "common/crypto.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "manager/agent_link/agent_call.h"
#include "manager/api/api.h"
#include "manager/core/manager.h"
#include "manager/core/worker.h"
#include "manager/http/http.h"

#define ANSWER_MAX (80u << 20) /* a file of AGENT_HTTP_FILE_MAX and some */

static volatile sig_atomic_t aborting;

static void call_unref(struct agent_call *call)
{
        if (--call->refs > 0)
                return;
        if (call->data_free)
                call->data_free(call->data);
        if (call->user_free)
                call->user_free(call->user);
        tess_error_free(call->err);
        buf_release(&call->answer);
        free(call->agent_id);
        free(call->address);
        free(call);
}

/* c's request ended (answered, or the client went away). */
static void ctx_released(void *state)
{
        struct agent_call *call = state;
        call->ctx = NULL;
        call_unref(call);
}

static void on_shutdown(struct api_ctx *c)
{
        struct agent_call *call = c->state;
        call->ctx = NULL;
        api_problem(c, 503, "unavailable", "the manager is stopping");
        http_resume(c->req);
}

/* On the loop thread, once the worker is done. */
static void call_done(struct manager *m UNUSED, void *data, void *msg UNUSED)
{
        struct agent_call *call = data;
        struct api_ctx *c = call->ctx;

        if (c) {
                c->on_shutdown = NULL;
                call->done(c, call);
                http_resume(c->req);
        }
        call_unref(call); /* the thread's reference */
}

static void call_work(struct worker *w UNUSED, void *data)
{
        struct agent_call *call = data;
        call->work(call);
}

static int on_progress(void *data UNUSED, curl_off_t dt UNUSED, curl_off_t dn UNUSED, curl_off_t ut UNUSED,
                       curl_off_t un UNUSED)
{
        return aborting;
}

static size_t on_data(char *p, size_t size, size_t n, void *data)
{
        struct buf *b = data;
        if (b->len + size * n > ANSWER_MAX)
                return 0;
        buf_append(b, p, size * n);
        return size * n;
}

static size_t on_header(char *p, size_t size, size_t n, void *data)
{
        struct agent_call *call = data;
        size_t len = size * n;
        const char *name = "content-type:";

        if (len > strlen(name) && strncasecmp(p, name, strlen(name)) == 0) {
                const char *v = p + strlen(name);
                size_t vlen = len - strlen(name);
                while (vlen > 0 && (*v == ' ' || *v == '\t'))
                        v++, vlen--;
                while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == ' '))
                        vlen--;
                snprintf(call->content_type, sizeof(call->content_type), "%.*s", (int)vlen, v);
        }
        return len;
}

int agent_call_request(struct agent_call *call, const char *method, const char *target, const void *body, size_t len,
                       const char *content_type, long timeout_s)
{
        _cleanup_free_ char *url = xasprintf("http://%s%s", call->address, target);
        _cleanup_free_ char *signer = xasprintf("manager:%s", call->agent_id);
        char sig[SIGN_HEX_MAX], auth[SIGN_HEX_MAX + 64], tsh[64], cth[160], hash[65], hashh[100];
        struct curl_slist *h = NULL;
        int64_t ts = now_usec() / USEC_PER_SEC;

        call->err = tess_error_free(call->err);
        buf_reset(&call->answer);
        call->status = 0;
        call->content_type[0] = '\0';
        sha256_hex(body ? body : "", len, hash);
        if (sign_agent_request_hashed(call->secret, method, target, ts, signer, hash, sig, &call->err) < 0)
                return -EIO;
        CURL *curl = curl_easy_init();
        if (!curl)
                return tess_err(&call->err, ENOMEM, "cannot create an HTTP client");
        snprintf(auth, sizeof(auth), "Authorization: TesseraManager signature=%s", sig);
        snprintf(tsh, sizeof(tsh), "X-Tessera-Agent-Time: %lld", (long long)ts);
        snprintf(cth, sizeof(cth), "Content-Type: %s", content_type ? content_type : "application/json");
        snprintf(hashh, sizeof(hashh), "X-Tessera-Content-SHA256: %s", hash);
        h = curl_slist_append(h, auth);
        h = curl_slist_append(h, tsh);
        h = curl_slist_append(h, cth);
        h = curl_slist_append(h, hashh);
        h = curl_slist_append(h, "Expect:");
        curl_easy_setopt(curl, CURLOPT_URL, url);
        curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
        curl_easy_setopt(curl, CURLOPT_HTTPHEADER, h);
        if (body) {
                curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
                curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
        }
        curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(curl, CURLOPT_WRITEDATA, &call->answer);
        curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
        curl_easy_setopt(curl, CURLOPT_HEADERDATA, call);
        curl_easy_setopt(curl, CURLOPT_TIMEOUT, timeout_s);
        curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(curl, CURLOPT_NOPROGRESS, 0L);
        CURLcode cc = curl_easy_perform(curl);
        curl_slist_free_all(h);
        if (cc == CURLE_OK)
                curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &call->status);
        curl_easy_cleanup(curl);
        if (cc != CURLE_OK)
                return tess_err(&call->err, EHOSTUNREACH, "agent %s (%s): %s", call->agent_id, call->address,
                                curl_easy_strerror(cc));
        if (call->status >= 200 && call->status < 300)
                return (int)call->status;
        json_t *j = json_loadb(call->answer.data, call->answer.len, 0, NULL);
        const char *msg = json_string_value(json_object_get(j, "error"));
        tess_err(&call->err, EIO, "%s", msg ? msg : "the agent failed the request");
        json_decref(j);
        return -EIO;
}

void agent_call_fail(struct api_ctx *c, struct agent_call *call)
{
        const char *msg = call->err ? call->err->msg : "the agent failed the request";

        if (call->status >= 400 && call->status < 500)
                api_problem(c, (unsigned)call->status,
                            call->status == 404   ? "not-found"
                            : call->status == 413 ? "too-large"
                                                  : "invalid-request",
                            "%s", msg);
        else
                api_problem(c, 502, "agent-failed", "agent %s: %s", call->agent_id, msg);
        call->err = tess_error_free(call->err);
}

void agent_call_retarget(struct agent_call *call, const char *agent_id, const char *address)
{
        free(call->agent_id);
        free(call->address);
        call->agent_id = xstrdup(agent_id);
        call->address = xstrdup(address);
}

struct agent_call *agent_call_start(struct api_ctx *c, const char *agent_id, const char *address,
                                    void (*work)(struct agent_call *),
                                    void (*done)(struct api_ctx *, struct agent_call *), void *data,
                                    void (*data_free)(void *))
{
        struct tess_error *err = NULL;
        struct agent_call *call = xcalloc(1, sizeof(*call));

        call->agent_id = xstrdup(agent_id);
        call->address = xstrdup(address);
        call->data = data;
        call->data_free = data_free;
        call->answer = (struct buf)BUF_INIT;
        snprintf(call->secret, sizeof(call->secret), "%s", c->m->cluster_secret);
        call->work = work;
        call->done = done;
        call->ctx = c;
        call->refs = 2; /* the API request's and the thread's */
        if (worker_start(c->m, call_work, call_done, call, &err) < 0) {
                call->refs = 1;
                call_unref(call);
                api_problem(c, 503, "unavailable", "%s", err->msg);
                tess_error_free(err);
                return NULL;
        }
        c->state = call;
        c->state_free = ctx_released;
        c->on_shutdown = on_shutdown;
        http_suspend(c->req);
        return call;
}

struct one_request {
        char *method, *target, *content_type;
        struct buf body;
        bool has_body;
        long timeout_s;
};

static void one_free(void *data)
{
        struct one_request *o = data;
        free(o->method);
        free(o->target);
        free(o->content_type);
        buf_release(&o->body);
        free(o);
}

static void one_work(struct agent_call *call)
{
        struct one_request *o = call->data;
        agent_call_request(call, o->method, o->target, o->has_body ? o->body.data : NULL, o->body.len, o->content_type,
                           o->timeout_s);
}

struct agent_call *agent_call_one(struct api_ctx *c, const char *agent_id, const char *address, const char *method,
                                  const char *target, const void *body, size_t len, const char *content_type,
                                  long timeout_s, void (*done)(struct api_ctx *, struct agent_call *))
{
        struct one_request *o = xcalloc(1, sizeof(*o));

        o->method = xstrdup(method);
        o->target = xstrdup(target);
        o->content_type = content_type ? xstrdup(content_type) : NULL;
        o->body = (struct buf)BUF_INIT;
        if (body) {
                buf_append(&o->body, body, len);
                o->has_body = true;
        }
        o->timeout_s = timeout_s;
        return agent_call_start(c, agent_id, address, one_work, done, o, one_free);
}

void agent_calls_abort(void)
{
        aborting = 1;
}
