/* policy.c - a resource group's scheduler settings, parsed and checked. */
#include "common/compat.h"

#include "common/timeutil.h"
#include "sched/sched.h"

static const char *const order_names[] = {
        [SCHED_FIFO] = "fifo",
        [SCHED_LIFO] = "lifo",
        [SCHED_DRF] = "drf",
        [SCHED_FAIR_SHARE] = "fair-share",
};

static const char *const select_names[] = {
        [SCHED_CONCENTRATED] = "concentrated",
        [SCHED_DISPERSED] = "dispersed",
        [SCHED_ROUNDROBIN] = "roundrobin",
};

const char *sched_order_name(enum sched_order o)
{
        return o >= 0 && (size_t)o < ARRAY_SIZE(order_names) ? order_names[o] : "?";
}

const char *sched_select_name(enum sched_select s)
{
        return s >= 0 && (size_t)s < ARRAY_SIZE(select_names) ? select_names[s] : "?";
}

static int lookup(const char *const *names, size_t n, const char *s)
{
        for (size_t i = 0; s && i < n; i++)
                if (streq(names[i], s))
                        return (int)i;
        return -1;
}

/* A non-negative integer option no larger than max. */
static int opt_int(const char *key, const json_t *v, int64_t max, int64_t *ret, struct tess_error **err)
{
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max)
                return tess_err(err, EINVAL, "scheduler_opts.%s must be an integer from 0 to %lld", key,
                                (long long)max);
        *ret = json_integer_value(v);
        return 0;
}

int sched_policy_parse(const char *scheduler, const json_t *opts, struct sched_policy *ret, struct tess_error **err)
{
        const char *key;
        json_t *v;
        int o = lookup(order_names, ARRAY_SIZE(order_names), scheduler ? scheduler : "fifo");
        struct sched_policy p;

        if (o < 0)
                return tess_err(err, EINVAL, "unknown scheduler '%s' (fifo, lifo, drf, fair-share)", scheduler);
        p = (struct sched_policy){
                .order = (enum sched_order)o,
                .select = SCHED_CONCENTRATED,
                .retries_to_skip = 5,
                .reserve_after = 50,
                .fair_share_half_life = 7 * 24 * 3600 * USEC_PER_SEC,
        };
        if (opts && !json_is_null(opts) && !json_is_object(opts))
                return tess_err(err, EINVAL, "scheduler_opts must be an object");
        if (opts && json_is_object(opts)) {
                json_object_foreach((json_t *)opts, key, v) {
                        int64_t n = 0;
                        int r = 0;
                        if (streq(key, "agent_selection")) {
                                int s = lookup(select_names, ARRAY_SIZE(select_names), json_string_value(v));
                                if (s < 0)
                                        return tess_err(err, EINVAL,
                                                        "scheduler_opts.agent_selection must be concentrated,"
                                                        " dispersed or roundrobin");
                                p.select = (enum sched_select)s;
                        } else if (streq(key, "num_retries_to_skip")) {
                                r = opt_int(key, v, 1000000, &n, err);
                                p.retries_to_skip = (int)n;
                        } else if (streq(key, "reserve_after_retries")) {
                                r = opt_int(key, v, 1000000, &n, err);
                                p.reserve_after = (int)n;
                        } else if (streq(key, "allow_fragmentation")) {
                                if (!json_is_boolean(v))
                                        return tess_err(err, EINVAL,
                                                        "scheduler_opts.allow_fragmentation must be true or false");
                                p.allow_fragmentation = json_is_true(v);
                        } else if (streq(key, "pending_timeout")) {
                                r = opt_int(key, v, 10LL * 365 * 24 * 3600, &n, err);
                                p.pending_timeout = n * USEC_PER_SEC;
                        } else if (streq(key, "fair_share_half_life")) {
                                r = opt_int(key, v, 10LL * 365 * 24 * 3600, &n, err);
                                if (r == 0 && n == 0)
                                        r = tess_err(err, EINVAL, "scheduler_opts.fair_share_half_life must be positive");
                                p.fair_share_half_life = n * USEC_PER_SEC;
                        } else {
                                return tess_err(err, EINVAL,
                                                "unknown scheduler option '%s' (agent_selection, num_retries_to_skip,"
                                                " reserve_after_retries, allow_fragmentation, pending_timeout,"
                                                " fair_share_half_life)",
                                                key);
                        }
                        if (r < 0)
                                return r;
                }
        }
        *ret = p;
        return 0;
}
