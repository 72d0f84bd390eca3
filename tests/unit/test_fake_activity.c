/* test_fake_activity.c - the fake driver's utilization (src/fakecuda/
 * fake_activity.c): how long a launch keeps a fake device busy, the
 * per-process samples the fake NVML makes of a process's record, and the
 * record itself, found through /proc in a launching process and not in
 * its idle child. */
#include "common/compat.h"

#include <signal.h>
#include <sys/wait.h>

#include "../lib/test.h"
#include "fakecuda/fake.h"

#define MS (1000 * 1000ll)

static void test_a_launch_is_busy_a_wave_per_wave_of_threads(void)
{
        const uint64_t wave = 108 * FAKE_THREADS_PER_SM;

        CHECK(fake_launch_ns(0, 108) == FAKE_WAVE_NS); /* a graph: one wave */
        CHECK(fake_launch_ns(1, 108) == FAKE_WAVE_NS);
        CHECK(fake_launch_ns(wave, 108) == FAKE_WAVE_NS);
        CHECK(fake_launch_ns(wave + 1, 108) == 2 * FAKE_WAVE_NS);
        CHECK(fake_launch_ns(10 * wave, 108) == 10 * FAKE_WAVE_NS);
        CHECK(fake_launch_ns(FAKE_THREADS_PER_SM, 0) == FAKE_WAVE_NS); /* no SMs: taken as one */
        CHECK(fake_launch_ns(UINT64_MAX, 1) == 0xffffffffll);          /* saturates */
}

/* The start of a period well after the epoch. */
static int64_t period(int64_t p)
{
        return (1764000000000ll / (FAKE_PERIOD_NS / MS) + p) * FAKE_PERIOD_NS;
}

static void test_busy_periods_become_samples(void)
{
        struct fake_activity *a = calloc(1, sizeof(*a));
        struct fake_sample s[FAKE_PERIODS];
        unsigned long long end0 = (unsigned long long)((period(0) + FAKE_PERIOD_NS) / 1000);

        fake_activity_add(a, 2, period(0) + 10 * MS, 30 * MS);
        fake_activity_add(a, 2, period(0) + 90 * MS, 20 * MS); /* 50 % of period 0 */
        fake_activity_add(a, 2, period(1), 25 * MS);           /* 25 % of period 1, none in 2 */
        fake_activity_add(a, 2, period(3) + 1, 80 * MS);       /* the current period: not yet */
        fake_activity_add(a, 3, period(1), 99 * MS);           /* another device */
        CHECK_INTEQ(fake_activity_samples(a, 42, 2, 0, period(3) + 5 * MS, s, FAKE_PERIODS), 2);
        CHECK(s[0].pid == 42 && s[0].time_us == end0 && s[0].percent == 50);
        CHECK(s[1].pid == 42 && s[1].time_us == end0 + FAKE_PERIOD_NS / 1000 && s[1].percent == 25);
        /* samples newer than the one last seen; counted without a buffer; at most max */
        CHECK_INTEQ(fake_activity_samples(a, 42, 2, end0, period(3), s, FAKE_PERIODS), 1);
        CHECK_INTEQ(s[0].percent, 25);
        CHECK_INTEQ(fake_activity_samples(a, 42, 2, 0, period(3), NULL, 0), 2);
        CHECK_INTEQ(fake_activity_samples(a, 42, 2, 0, period(3), s, 1), 1);
        CHECK_INTEQ(s[0].percent, 50);
        /* period 3 is reported once it is over */
        CHECK_INTEQ(fake_activity_samples(a, 42, 2, end0, period(4), s, FAKE_PERIODS), 2);
        CHECK_INTEQ(s[1].percent, 80);
        CHECK_INTEQ(fake_activity_samples(a, 42, 3, 0, period(4), s, FAKE_PERIODS), 1);
        CHECK_INTEQ(s[0].percent, 99);
        CHECK_INTEQ(fake_activity_samples(a, 42, 0, 0, period(4), s, FAKE_PERIODS), 0);
        CHECK_INTEQ(fake_activity_samples(a, 42, FAKE_MAX_DEVICES, 0, period(4), s, FAKE_PERIODS), 0);
        free(a);
}

static void test_percent_rounds_and_stops_at_100(void)
{
        struct fake_activity *a = calloc(1, sizeof(*a));
        struct fake_sample s[FAKE_PERIODS];

        fake_activity_add(a, 0, period(0), FAKE_PERIOD_NS / 250); /* 0.4 %: idle, not listed */
        fake_activity_add(a, 0, period(1), FAKE_PERIOD_NS / 200); /* 0.5 %: 1 */
        fake_activity_add(a, 0, period(2), 3 * FAKE_PERIOD_NS);   /* more than the period */
        fake_activity_add(a, 0, period(3), FAKE_PERIOD_NS / 4);
        fake_activity_add(a, 0, period(3) + 1, FAKE_PERIOD_NS / 4);
        CHECK_INTEQ(fake_activity_samples(a, 1, 0, 0, period(4), s, FAKE_PERIODS), 3);
        CHECK(s[0].percent == 1 && s[1].percent == 100 && s[2].percent == 50);
        fake_activity_add(a, 0, period(5), 0xffffffffll);
        fake_activity_add(a, 0, period(5), 0xffffffffll); /* the slot saturates */
        CHECK_INTEQ(fake_activity_samples(a, 1, 0, 0, period(6), s, FAKE_PERIODS), 4);
        CHECK_INTEQ(s[3].percent, 100);
        free(a);
}

static void test_old_periods_are_forgotten(void)
{
        struct fake_activity *a = calloc(1, sizeof(*a));
        struct fake_sample s[FAKE_PERIODS];

        fake_activity_add(a, 0, period(0), 10 * MS);
        CHECK_INTEQ(fake_activity_samples(a, 1, 0, 0, period(FAKE_PERIODS - 1), s, FAKE_PERIODS), 1);
        CHECK_INTEQ(fake_activity_samples(a, 1, 0, 0, period(FAKE_PERIODS), s, FAKE_PERIODS), 0); /* out of the ring */
        /* its slot taken by a later period: that period's time only */
        fake_activity_add(a, 0, period(FAKE_PERIODS), 20 * MS);
        CHECK_INTEQ(fake_activity_samples(a, 1, 0, 0, period(FAKE_PERIODS + 1), s, FAKE_PERIODS), 1);
        CHECK_INTEQ(s[0].percent, 20);
        free(a);
}

struct found {
        unsigned pid;
        int holders;
        unsigned percent[2]; /* of node 0 and 1 */
};

static void look(unsigned pid, const struct fake_activity *a, void *data)
{
        struct found *f = data;
        struct fake_sample s[FAKE_PERIODS];

        f->holders++;
        if (pid != f->pid)
                return;
        for (int node = 0; node < 2; node++) {
                /* as if the current period were over */
                int64_t later = fake_now_ns() + FAKE_PERIOD_NS;
                size_t n = fake_activity_samples(a, pid, node, 0, later, s, FAKE_PERIODS);
                for (size_t i = 0; i < n; i++)
                        f->percent[node] += s[i].percent;
        }
}

/* Launches on device 0, the node's device 1 (TESSERA_FAKE_CUDA_INDICES),
 * show in this process's record, found through /proc; a forked child that
 * launches nothing holds none. */
static void test_a_launching_process_is_found_an_idle_child_is_not(void)
{
        struct found f = { .pid = (unsigned)getpid() };
        int ready[2];
        char c;

        fake_activity_each(look, &f);
        CHECK_INTEQ(f.holders, 0);     /* no launch yet */
        for (int i = 0; i < 2000; i++) /* 20 ms of 10 us waves */
                fake_activity_launch(0, 1);
        fake_activity_launch(5, 1); /* not a device of this process */
        CHECK(pipe(ready) == 0);
        pid_t child = fork();
        if (child == 0) {
                close(ready[0]);
                if (write(ready[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        close(ready[1]);
        CHECK(child > 0 && read(ready[0], &c, 1) == 1);
        close(ready[0]);
        fake_activity_each(look, &f);
        CHECK_INTEQ(f.holders, 1);
        CHECK_INTEQ(f.percent[0], 0);
        CHECK(f.percent[1] >= 20 && f.percent[1] <= 21); /* in one period or split over two */
        if (child > 0) {
                kill(child, SIGKILL);
                waitpid(child, NULL, 0);
        }
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_a_launch_is_busy_a_wave_per_wave_of_threads),
                TEST(test_busy_periods_become_samples),
                TEST(test_percent_rounds_and_stops_at_100),
                TEST(test_old_periods_are_forgotten),
                TEST(test_a_launching_process_is_found_an_idle_child_is_not),
                { 0 },
        };
        /* read once, at the first call into the fake */
        setenv("TESSERA_FAKE_CUDA_DEVICES", "2", 1);
        setenv("TESSERA_FAKE_CUDA_INDICES", "1,0", 1);
        return test_main(tests);
}
