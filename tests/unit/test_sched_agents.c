/* test_sched_agents.c - what an agent's silence makes it
 * (sched_agent_verdict): UNREACHABLE after three of its heartbeat
 * intervals, LOST after lost_after, both counted from what the manager
 * could have heard. */
#include "common/compat.h"

#include "../lib/test.h"
#include "sched/sched.h"

#define S 1000000LL /* a second in usec */
#define HOUR (3600 * S)

static enum sched_agent_state verdict(enum sched_agent_state was, int64_t last, int64_t heard_from, int64_t now,
                                      int64_t lost_after)
{
        return sched_agent_verdict(was, last, 5 * S, heard_from, now, lost_after);
}

static void test_silence_of_an_alive_agent(void)
{
        /* beating: alive; three beats missed (15 s): still alive at the edge, then unreachable */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 0, 104 * S, HOUR), SCHED_AGENT_ALIVE);
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 0, 115 * S, HOUR), SCHED_AGENT_ALIVE);
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 0, 115 * S + 1, HOUR), SCHED_AGENT_UNREACHABLE);
        /* an agent that promised an hour between beats is not missed after 15 s */
        CHECK_INTEQ(sched_agent_verdict(SCHED_AGENT_ALIVE, 100 * S, HOUR, 0, 200 * S, 2 * HOUR), SCHED_AGENT_ALIVE);
        /* silent past lost_after: lost, whatever it was */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 0, 100 * S + HOUR + 1, HOUR), SCHED_AGENT_LOST);
        CHECK_INTEQ(verdict(SCHED_AGENT_UNREACHABLE, 100 * S, 0, 100 * S + HOUR + 1, HOUR), SCHED_AGENT_LOST);
        CHECK_INTEQ(verdict(SCHED_AGENT_UNREACHABLE, 100 * S, 0, 100 * S + HOUR, HOUR), SCHED_AGENT_UNREACHABLE);
        /* lost_after 0: never lost */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 0, 100 * S + 100 * HOUR, 0), SCHED_AGENT_UNREACHABLE);
        /* only a heartbeat brings a lost agent back */
        CHECK_INTEQ(verdict(SCHED_AGENT_LOST, 100 * S, 0, 101 * S, HOUR), SCHED_AGENT_LOST);
}

static void test_silence_counts_from_what_could_be_heard(void)
{
        /* the manager started (or its database came back) at 7200 s after two
         * hours without hearing anything: nobody is judged for 15 s ... */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 7200 * S, 7201 * S, HOUR), SCHED_AGENT_ALIVE);
        CHECK_INTEQ(verdict(SCHED_AGENT_UNREACHABLE, 100 * S, 7200 * S, 7201 * S, HOUR), SCHED_AGENT_UNREACHABLE);
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 7200 * S, 7215 * S, HOUR), SCHED_AGENT_ALIVE);
        /* ... then a silent one is unreachable, and lost only an hour later */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 100 * S, 7200 * S, 7216 * S, HOUR), SCHED_AGENT_UNREACHABLE);
        CHECK_INTEQ(verdict(SCHED_AGENT_UNREACHABLE, 100 * S, 7200 * S, 7200 * S + HOUR, HOUR),
                    SCHED_AGENT_UNREACHABLE);
        CHECK_INTEQ(verdict(SCHED_AGENT_UNREACHABLE, 100 * S, 7200 * S, 7200 * S + HOUR + 1, HOUR), SCHED_AGENT_LOST);
        /* a heartbeat after that moment counts from itself */
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 7210 * S, 7200 * S, 7224 * S, HOUR), SCHED_AGENT_ALIVE);
        CHECK_INTEQ(verdict(SCHED_AGENT_ALIVE, 7210 * S, 7200 * S, 7226 * S, HOUR), SCHED_AGENT_UNREACHABLE);
}

static const struct test tests[] = {
        TEST(test_silence_of_an_alive_agent),
        TEST(test_silence_counts_from_what_could_be_heard),
        {},
};

int main(void)
{
        return test_main(tests);
}
