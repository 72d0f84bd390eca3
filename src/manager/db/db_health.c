/* db_health.c - an outage's start and end, and failing fast meanwhile
 * (see db_health.h). */
#include "common/compat.h"

#include "manager/db/db_health.h"

bool db_health_failed(struct db_health *h, int64_t now, int64_t retry_in, bool reads_work)
{
        bool begins = !h->down;

        if (begins) {
                h->down = true;
                h->since = now;
                h->failed = 0;
        }
        h->reads_work = reads_work;
        h->failed++;
        h->retry_at = now + (retry_in > 0 ? retry_in : 0);
        return begins;
}

void db_health_refused(struct db_health *h)
{
        h->failed++;
}

bool db_health_may_try(const struct db_health *h, int64_t now)
{
        return !h->down || now >= h->retry_at;
}

bool db_health_ok(struct db_health *h, int64_t now, bool wrote, int64_t *ret_usec, uint64_t *ret_failed)
{
        if (!h->down || (h->reads_work && !wrote))
                return false;
        *ret_usec = now > h->since ? now - h->since : 0;
        *ret_failed = h->failed;
        *h = (struct db_health){ 0 };
        return true;
}
