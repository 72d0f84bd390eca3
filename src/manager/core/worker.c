/* worker.c - see worker.h.  Each message is one write of a small struct
 * to a pipe (atomic below PIPE_BUF), so the threads' messages never
 * interleave; the loop reads them in order. */
#include "common/compat.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "common/log.h"
#include "common/loop.h"
#include "manager/core/manager.h"
#include "manager/core/worker.h"

struct worker {
        struct manager *m;
        void (*work)(struct worker *w, void *data);
        worker_loop_fn done;
        void *data;
};

struct worker_msg {
        struct worker *w;
        worker_loop_fn fn;
        void *msg;
        bool last; /* the end: the worker is freed after fn */
};

static int msg_pipe[2] = { -1, -1 };

static void on_message(struct loop *l UNUSED, int fd, uint32_t events UNUSED, void *data UNUSED)
{
        struct worker_msg msg;

        while (read(fd, &msg, sizeof(msg)) == (ssize_t)sizeof(msg)) {
                msg.fn(msg.w->m, msg.w->data, msg.msg);
                if (msg.last)
                        free(msg.w);
        }
}

static void send_msg(const struct worker_msg *msg)
{
        if (write(msg_pipe[1], msg, sizeof(*msg)) != (ssize_t)sizeof(*msg))
                log_error("worker: cannot hand a message to the loop: %s", strerror(errno));
}

void worker_post(struct worker *w, worker_loop_fn fn, void *msg)
{
        send_msg(&(struct worker_msg){ .w = w, .fn = fn, .msg = msg });
}

static void *worker_thread(void *data)
{
        struct worker *w = data;

        w->work(w, w->data);
        send_msg(&(struct worker_msg){ .w = w, .fn = w->done, .last = true });
        return NULL;
}

static int ensure_pipe(struct manager *m, struct tess_error **err)
{
        if (msg_pipe[0] >= 0)
                return 0;
        if (pipe2(msg_pipe, O_CLOEXEC | O_NONBLOCK) < 0)
                return tess_err(err, errno, "pipe: %s", strerror(errno));
        fcntl(msg_pipe[1], F_SETFL, 0); /* the threads' writes block */
        curl_global_init(CURL_GLOBAL_DEFAULT);
        return loop_add_fd(m->loop, msg_pipe[0], 0x001 /* EPOLLIN */, on_message, NULL, err);
}

int worker_start(struct manager *m, void (*work)(struct worker *w, void *data), worker_loop_fn done, void *data,
                 struct tess_error **err)
{
        pthread_attr_t attr;
        pthread_t t;
        int r;

        r = ensure_pipe(m, err);
        if (r < 0)
                return r;
        struct worker *w = xcalloc(1, sizeof(*w));
        *w = (struct worker){ .m = m, .work = work, .done = done, .data = data };
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, (size_t)1 << 20);
        r = pthread_create(&t, &attr, worker_thread, w);
        pthread_attr_destroy(&attr);
        if (r != 0) {
                free(w);
                return tess_err(err, r, "cannot start a thread: %s", strerror(r));
        }
        return 0;
}
