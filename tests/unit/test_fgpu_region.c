/* test_fgpu_region.c - the fGPU accounting region shared by the processes
 * of a container (src/fgpu/region.c): one budget for all of them, charges
 * of dead processes reclaimed (kill -9 included), a reused pid not taken
 * for its predecessor, a lock abandoned by a dying holder recovered, and a
 * region that does not fit on a full disk refused (not a SIGBUS). */
#include "common/compat.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "../lib/test.h"
#include "fgpu/region.h"

#define MIB (1024ull * 1024)

static char path[64];

static struct fgpu_region *fresh(void)
{
        struct fgpu_region *r = NULL;
        char err[256];

        snprintf(path, sizeof(path), "/tmp/tessera-test-region.%d", (int)getpid());
        unlink(path);
        if (fgpu_region_open(path, true, &r, err, sizeof(err)) < 0)
                test_fail(__FILE__, __LINE__, "%s", err);
        return r;
}

static void test_charge_within_limit(void)
{
        struct fgpu_region *r = fresh();
        if (!r)
                return;
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 60 * MIB) == 0);
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 40 * MIB) == 0); /* exactly at the limit */
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 1) == -ENOMEM);  /* one byte past it */
        CHECK(fgpu_region_used(r, 0) == 100 * MIB);                /* nothing charged for the refusal */
        CHECK(fgpu_region_charge(r, 1, 10 * MIB, 10 * MIB) == 0);  /* devices are separate */
        fgpu_region_refund(r, 0, 60 * MIB);
        CHECK(fgpu_region_used(r, 0) == 40 * MIB);
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 60 * MIB) == 0);
        CHECK(fgpu_region_charge(r, 0, 0, 1ull << 40) == 0);                /* no limit */
        CHECK(fgpu_region_charge(r, FGPU_REGION_DEVICES, 0, 1) == -ENOMEM); /* no such device */
        /* a second opener sees the same numbers; another version is refused */
        struct fgpu_region *again = NULL;
        char err[256];
        CHECK(fgpu_region_open(path, false, &again, err, sizeof(err)) == 0);
        CHECK(again && fgpu_region_used(again, 1) == 10 * MIB);
        fgpu_region_close(again);
        FILE *f = fopen(path, "r+");
        CHECK(f && fputc('X', f) != EOF);
        fclose(f);
        CHECK(fgpu_region_open(path, false, &again, err, sizeof(err)) == -EPROTO);
        fgpu_region_close(r);
        unlink(path);
}

/* 8 processes allocate and free concurrently: together never past the limit. */
static void test_eight_processes_share_one_budget(void)
{
        struct fgpu_region *r = fresh();
        const uint64_t limit = 64 * MIB;
        pid_t kids[8];

        if (!r)
                return;
        for (int k = 0; k < 8; k++) {
                kids[k] = fork();
                if (kids[k] == 0) {
                        unsigned seed = (unsigned)getpid();
                        uint64_t held[16] = { 0 };
                        int bad = 0;
                        for (int i = 0; i < 4000; i++) {
                                int slot = (int)(rand_r(&seed) % 16);
                                if (held[slot]) {
                                        fgpu_region_refund(r, 0, held[slot]);
                                        held[slot] = 0;
                                } else {
                                        uint64_t want = (1 + rand_r(&seed) % 8) * MIB;
                                        if (fgpu_region_charge(r, 0, limit, want) == 0)
                                                held[slot] = want;
                                }
                                if (fgpu_region_used(r, 0) > limit)
                                        bad++;
                        }
                        for (int s = 0; s < 16; s++)
                                fgpu_region_refund(r, 0, held[s]);
                        _exit(bad ? 1 : 0);
                }
        }
        int failed = 0;
        for (int k = 0; k < 8; k++) {
                int st;
                waitpid(kids[k], &st, 0);
                failed += !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
        }
        CHECK_INTEQ(failed, 0);
        CHECK(fgpu_region_used(r, 0) == 0); /* every charge refunded exactly */
        fgpu_region_close(r);
        unlink(path);
}

static void test_kill_9_returns_the_charge(void)
{
        struct fgpu_region *r = fresh();
        int p[2];
        char c;

        if (!r || pipe(p) < 0)
                return;
        pid_t kid = fork();
        if (kid == 0) {
                fgpu_region_charge(r, 0, 100 * MIB, 90 * MIB);
                if (write(p[1], "x", 1) != 1)
                        _exit(1);
                pause();
                _exit(0);
        }
        CHECK(read(p[0], &c, 1) == 1);
        CHECK(fgpu_region_used(r, 0) == 90 * MIB);
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 20 * MIB) == -ENOMEM); /* the holder lives */
        kill(kid, SIGKILL);
        waitpid(kid, NULL, 0);
        CHECK(fgpu_region_charge(r, 0, 100 * MIB, 20 * MIB) == 0); /* its 90 MiB came back */
        CHECK(fgpu_region_used(r, 0) == 20 * MIB);
        close(p[0]);
        close(p[1]);
        fgpu_region_close(r);
        unlink(path);
}

static void test_reused_pid_is_another_process(void)
{
        struct fgpu_region *r = fresh();
        if (!r)
                return;
        /* a slot of our pid, but of an earlier process (another start time) */
        fgpu_region_lock(r);
        r->procs[7].pid = getpid();
        r->procs[7].start = fgpu_proc_start(getpid()) - 1;
        r->procs[7].used[0] = 50 * MIB;
        r->dev[0].used = 50 * MIB;
        fgpu_region_unlock(r);
        CHECK(fgpu_region_charge(r, 0, 60 * MIB, 30 * MIB) == 0); /* the old charge was reclaimed */
        CHECK(fgpu_region_used(r, 0) == 30 * MIB);
        CHECK(r->procs[7].pid == 0);
        fgpu_region_close(r);
        unlink(path);
}

static void test_lock_abandoned_by_a_dead_holder(void)
{
        struct fgpu_region *r = fresh();
        if (!r)
                return;
        pid_t kid = fork();
        if (kid == 0) {
                fgpu_region_charge(r, 0, 0, 5 * MIB);
                fgpu_region_lock(r);
                r->dev[0].used = 999 * MIB; /* half an update */
                _exit(0);                   /* dies holding the lock */
        }
        waitpid(kid, NULL, 0);
        fgpu_region_lock(r); /* EOWNERDEAD: recovered, totals recounted from live slots */
        CHECK(r->dev[0].used == 0);
        fgpu_region_unlock(r);
        CHECK(fgpu_region_charge(r, 0, 10 * MIB, 10 * MIB) == 0);
        fgpu_region_close(r);
        unlink(path);
}

/* On a full filesystem (a tmpfs of 64 KiB, filled) a region cannot be
 * made: the open says so.  It once made the file sparse and wrote into its
 * mapping, and the first write killed the process with SIGBUS (an agent
 * that vanished without a word while its disk was full). */
static void test_full_disk_refused(void)
{
        char dir[] = "/tmp/tessera-test-region-full.XXXXXX";
        int status;

        if (geteuid() != 0)
                SKIP("needs root (mounts a small tmpfs)");
        if (!mkdtemp(dir) || mount("tmpfs", dir, "tmpfs", 0, "size=64k") < 0) {
                test_fail(__FILE__, __LINE__, "a tmpfs at %s: %s", dir, strerror(errno));
                rmdir(dir);
                return;
        }
        char fill[128], region[128];
        snprintf(fill, sizeof(fill), "%s/fill", dir);
        snprintf(region, sizeof(region), "%s/region", dir);
        int fd = open(fill, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        char block[4096] = { 0 };
        while (fd >= 0 && write(fd, block, sizeof(block)) == (ssize_t)sizeof(block))
                ;
        if (fd >= 0)
                close(fd);
        pid_t pid = fork();
        if (pid == 0) {
                struct fgpu_region *r = NULL;
                char err[256];
                int rc = fgpu_region_open(region, true, &r, err, sizeof(err));
                _exit(rc == -ENOSPC ? 0 : rc < 0 ? 2 : 3);
        }
        CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
        CHECK(!WIFSIGNALED(status)); /* SIGBUS was the bug */
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* -ENOSPC */
        umount2(dir, MNT_DETACH);
        rmdir(dir);
}

int main(void)
{
        static const struct test tests[] = {
                TEST(test_charge_within_limit),
                TEST(test_eight_processes_share_one_budget),
                TEST(test_kill_9_returns_the_charge),
                TEST(test_reused_pid_is_another_process),
                TEST(test_lock_abandoned_by_a_dead_holder),
                TEST(test_full_disk_refused),
                { 0 },
        };
        return test_main(tests);
}
