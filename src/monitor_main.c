/* monitor_main.c - `tessera-monitor _monitor DIR`: the process that owns one
 * running container (src/agent/container/monitor.h), as `tessera _monitor DIR` is.
 * The agent runs this one when it is installed beside tessera: a program
 * started for every session and left running beside each container is best
 * small (only jansson and libc to load: about 1 ms to start, where the
 * whole tessera takes 11). */
#include "common/compat.h"

#include "agent/container/monitor.h"

int main(int argc, char **argv)
{
        if (argc >= 2 && streq(argv[1], "_monitor"))
                return monitor_main(argc - 1, argv + 1);
        fprintf(stderr, "usage: tessera-monitor _monitor DIR (started by the agent)\n");
        return 2;
}
