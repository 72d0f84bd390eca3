/* loop.h - a small single-threaded event loop (epoll + one-shot timers),
 * in the manner of redis's ae.  Daemons run everything on it; blocking work
 * goes to child processes. */
#ifndef TESS_LOOP_H
#define TESS_LOOP_H

#include <stdint.h>

#include "common/error.h"

struct loop;
typedef void (*loop_fd_fn)(struct loop *l, int fd, uint32_t events, void *data);
typedef void (*loop_timer_fn)(struct loop *l, void *data);

int loop_new(struct loop **ret, struct tess_error **err);
struct loop *loop_free(struct loop *l);

/* Watch fd for EPOLLIN/EPOLLOUT events; one watcher per fd. */
int loop_add_fd(struct loop *l, int fd, uint32_t events, loop_fd_fn fn, void *data, struct tess_error **err);
int loop_mod_fd(struct loop *l, int fd, uint32_t events, struct tess_error **err);
void loop_del_fd(struct loop *l, int fd);

/* One-shot timer after delay_usec; returns an id > 0 for loop_cancel_timer. */
uint64_t loop_add_timer(struct loop *l, int64_t delay_usec, loop_timer_fn fn, void *data);
void loop_cancel_timer(struct loop *l, uint64_t id);

/* Functions run before each wait, in the order added (e.g. to feed a
 * library's own timeouts: one per HTTP server); each may shorten the wait
 * by lowering *timeout_usec.  At most LOOP_PREPARE_MAX (-ENOSPC);
 * loop_del_prepare removes the one added with the same fn and data. */
#define LOOP_PREPARE_MAX 4
typedef void (*loop_prepare_fn)(struct loop *l, int64_t *timeout_usec, void *data);
int loop_add_prepare(struct loop *l, loop_prepare_fn fn, void *data, struct tess_error **err);
void loop_del_prepare(struct loop *l, loop_prepare_fn fn, void *data);

int loop_run(struct loop *l, struct tess_error **err);
void loop_stop(struct loop *l);

#endif
