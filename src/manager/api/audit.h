/* audit.h - the audit log: who did what, when, from where, with what outcome.
 *
 * Every authenticated state-changing request is recorded (reads too when
 * `audit_reads` is set) when it ends.  Entries are queued and written in
 * one transaction every 200 ms or every 64 entries, and at shutdown, so a
 * burst of writes costs one audit commit per batch; a kill -9 may lose the
 * last 200 ms of audit entries, never a change itself. */
#ifndef TESS_AUDIT_H
#define TESS_AUDIT_H

struct manager;
struct api_ctx;
struct audit;

struct audit *audit_new(void);
struct audit *audit_free(struct audit *a);
void audit_record(struct manager *m, const struct api_ctx *c, unsigned status);
/* Write what is queued now. */
void audit_flush(struct manager *m);

#endif
