/* proc.h - the agent's child processes: start a program with chosen stdio
 * (optionally inside a network namespace), run one to completion with its
 * output captured, and tell whether a recorded pid is still the same
 * process (pid + start time, so that a recycled pid is not mistaken for it).
 *
 * Children start with every signal at its default disposition, an empty
 * signal mask and no file descriptor but 0, 1 and 2, whatever the parent had
 * (the monitor ignores SIGTERM and blocks SIGCHLD; runc and the container
 * must not inherit that). */
#ifndef TESSERA_AGENT_PROC_H
#define TESSERA_AGENT_PROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/error.h"

/* Start argv (argv[0] looked up in PATH) with stdin/stdout/stderr on the
 * given fds (-1: /dev/null), inside the network namespace `netns_fd` when
 * it is >= 0.  OUT ret_pid - the child, to reap with proc_wait(). */
int proc_spawn(const char *const *argv, int stdin_fd, int stdout_fd, int stderr_fd, int netns_fd, pid_t *ret_pid,
               struct tess_error **err);

/* Wait for a child; RET its status as a shell reports it: the exit code,
 * or 128 + the signal that killed it. */
int proc_wait(pid_t pid, int *ret_status, struct tess_error **err);

/* Status of a waitpid() status word, as proc_wait() reports it. */
int proc_status_code(int wstatus);

/* Run argv to completion with `input` (may be NULL, < 64 KiB) on stdin,
 * stdout and stderr captured together into `out` (may be NULL).  When
 * ret_status is NULL a non-zero status is an error (EIO) whose message
 * carries the output; otherwise the status is returned there. */
int proc_run(const char *const *argv, const char *input, int netns_fd, struct buf *out, int *ret_status,
             struct tess_error **err);

/* Run fn(arg) in a forked child and wait for it: for calls that change
 * the calling process (unshare, chdir before a mount with relative paths,
 * setsid).  fn returns 0 or a positive errno; RET 0 or -that errno (-EIO
 * when the child died otherwise). */
int proc_in_child(int (*fn)(void *arg), void *arg);

/* The start time of a process (field 22 of /proc/PID/stat, clock ticks
 * since boot); -ESRCH when there is no such process. */
int proc_start_time(pid_t pid, uint64_t *ret);

/* Is pid alive and started at start_time (0: any start time)?  A zombie
 * counts as gone. */
bool proc_alive(pid_t pid, uint64_t start_time);

/* Is NAME an executable file in one of PATH's directories (NULL: the
 * usual ones)? */
bool proc_in_path(const char *name, const char *path);

#endif
