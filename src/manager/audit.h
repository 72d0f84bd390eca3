/* audit.h - the audit log: who did what, when, from where, with what outcome.
 * Every authenticated state-changing request is recorded (reads too when
 * `audit_reads` is set). */
#ifndef TESS_AUDIT_H
#define TESS_AUDIT_H

struct manager;
struct api_ctx;

void audit_record(struct manager *m, const struct api_ctx *c, unsigned status);

#endif
