/* manager_link.c - the agent's requests to the manager: JSON over HTTP,
 * signed with the cluster secret (sign_agent_request, the scheme
 * api_agent_auth() checks, src/manager/api/auth.c).  One link per thread: a link owns a
 * curl handle, which keeps its connection alive between requests. */
#include "common/compat.h"

#include <curl/curl.h>
#include <pthread.h>

#include "common/buf.h"
#include "common/sign.h"
#include "common/timeutil.h"
#include "agent/agent.h"

#define ANSWER_MAX (64u << 20) /* a desired state of many kernels stays far below */

struct manager_link {
        CURL *curl;
        char *url, *id, *secret;
        volatile sig_atomic_t *abort;
        long status;         /* of the last answer; 0: none came */
        int64_t retry_after; /* the wait it asked for (usec); 0: none */
};

static void curl_init_once(void)
{
        curl_global_init(CURL_GLOBAL_DEFAULT);
}

static int on_progress(void *data, curl_off_t dt UNUSED, curl_off_t dn UNUSED, curl_off_t ut UNUSED,
                       curl_off_t un UNUSED)
{
        const struct manager_link *l = data;
        return l->abort && *l->abort;
}

int manager_link_new(const char *url, const char *agent_id, const char *secret, volatile sig_atomic_t *abort,
                     struct manager_link **ret, struct tess_error **err)
{
        static pthread_once_t once = PTHREAD_ONCE_INIT;
        pthread_once(&once, curl_init_once);
        struct manager_link *l = xcalloc(1, sizeof(*l));

        l->curl = curl_easy_init();
        if (!l->curl) {
                free(l);
                return tess_err(err, ENOMEM, "cannot create an HTTP client");
        }
        l->url = xstrdup(url);
        while (*l->url && l->url[strlen(l->url) - 1] == '/')
                l->url[strlen(l->url) - 1] = '\0';
        l->id = xstrdup(agent_id);
        l->secret = xstrdup(secret);
        l->abort = abort;
        *ret = l;
        return 0;
}

struct manager_link *manager_link_free(struct manager_link *l)
{
        if (!l)
                return NULL;
        curl_easy_cleanup(l->curl);
        free(l->url);
        free(l->id);
        free(l->secret);
        free(l);
        return NULL;
}

static size_t on_data(char *p, size_t size, size_t n, void *data)
{
        struct buf *b = data;
        if (b->len + size * n > ANSWER_MAX)
                return 0; /* curl fails the transfer */
        buf_append(b, p, size * n);
        return size * n;
}

int manager_link_post(struct manager_link *l, const char *path, json_t *body, long timeout_sec, json_t **ret,
                      struct tess_error **err)
{
        _cleanup_free_ char *text = json_dumps(body, JSON_COMPACT);
        _cleanup_free_ char *url = xasprintf("%s%s", l->url, path);
        char sig[SIGN_HEX_MAX], auth[SIGN_HEX_MAX + 96], tsh[64];
        struct buf answer = BUF_INIT;
        struct curl_slist *h = NULL;
        long status = 0;
        int64_t ts = now_usec() / USEC_PER_SEC;
        int r = 0;

        *ret = NULL;
        l->status = 0;
        l->retry_after = 0;
        if (sign_agent_request(l->secret, "POST", path, ts, l->id, text, strlen(text), sig, err) < 0)
                return -EIO;
        snprintf(auth, sizeof(auth), "Authorization: TesseraAgent id=%s, signature=%s", l->id, sig);
        snprintf(tsh, sizeof(tsh), "X-Tessera-Agent-Time: %lld", (long long)ts);
        h = curl_slist_append(h, auth);
        h = curl_slist_append(h, tsh);
        h = curl_slist_append(h, "Content-Type: application/json");
        h = curl_slist_append(h, "Expect:");
        curl_easy_reset(l->curl);
        curl_easy_setopt(l->curl, CURLOPT_URL, url);
        curl_easy_setopt(l->curl, CURLOPT_HTTPHEADER, h);
        curl_easy_setopt(l->curl, CURLOPT_POSTFIELDS, text);
        curl_easy_setopt(l->curl, CURLOPT_POSTFIELDSIZE, (long)strlen(text));
        curl_easy_setopt(l->curl, CURLOPT_WRITEFUNCTION, on_data);
        curl_easy_setopt(l->curl, CURLOPT_WRITEDATA, &answer);
        curl_easy_setopt(l->curl, CURLOPT_TIMEOUT, timeout_sec);
        curl_easy_setopt(l->curl, CURLOPT_CONNECTTIMEOUT, 5L);
        curl_easy_setopt(l->curl, CURLOPT_NOSIGNAL, 1L);
        curl_easy_setopt(l->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
        curl_easy_setopt(l->curl, CURLOPT_XFERINFODATA, l);
        curl_easy_setopt(l->curl, CURLOPT_NOPROGRESS, 0L);
        CURLcode cc = curl_easy_perform(l->curl);
        curl_slist_free_all(h);
        if (cc != CURLE_OK) {
                r = tess_err(err, EIO, "%s: %s", url, curl_easy_strerror(cc));
                goto out;
        }
        curl_easy_getinfo(l->curl, CURLINFO_RESPONSE_CODE, &status);
        curl_off_t wait = 0;
        if (curl_easy_getinfo(l->curl, CURLINFO_RETRY_AFTER, &wait) == CURLE_OK && wait > 0)
                l->retry_after = (wait < 3600 ? (int64_t)wait : 3600) * USEC_PER_SEC;
        l->status = status;
        json_t *j = json_loadb(answer.data, answer.len, 0, NULL);
        if (status < 200 || status > 299) {
                const char *title = json_string_value(json_object_get(j, "title"));
                r = tess_err(err, status == 401 || status == 403 ? EACCES : EIO, "%s: %ld %s", url, status,
                             title ? title : "(no message)");
                json_decref(j);
                goto out;
        }
        if (!j) {
                r = tess_err(err, EIO, "%s: the answer is not JSON", url);
                goto out;
        }
        *ret = j;
out:
        buf_release(&answer);
        return r;
}

long manager_link_status(const struct manager_link *l)
{
        return l->status;
}

int64_t manager_link_retry_after(const struct manager_link *l)
{
        return l->retry_after;
}
