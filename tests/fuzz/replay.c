/* replay.c - main() for fuzz targets built without libFuzzer (crun's fuzzer
 * main, SQLite's fuzzcheck): runs LLVMFuzzerTestOneInput over every file in
 * the files and directories on the command line, by default
 * tests/fuzz/corpus/<parser>/ for a binary named fuzz_<parser>.  Each input
 * is copied into a buffer of exactly its size so that ASan sees over-reads.
 * Prints `ok N - file` per input and ends with `N passed, N failed`; a crash
 * prints `not ok` for the input that caused it before the process dies. */
#include "common/compat.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Present when built with a sanitizer; called before it kills the process. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static const char *current;
static int n_run, n_passed;

static void report_death(void)
{
        static const char msg[] = "not ok - crashed on input: ";
        static volatile sig_atomic_t reported;
        ssize_t UNUSED w;

        if (reported)
                return;
        reported = 1;
        /* async-signal-safe: write(2) only */
        w = write(STDOUT_FILENO, msg, sizeof(msg) - 1);
        if (current)
                w = write(STDOUT_FILENO, current, strlen(current));
        w = write(STDOUT_FILENO, "\n", 1);
}

static void on_fatal_signal(int sig)
{
        report_death();
        signal(sig, SIG_DFL);
        raise(sig);
}

static int run_file(const char *path)
{
        FILE *f = fopen(path, "rbe");
        uint8_t *data = NULL;
        size_t size = 0, cap = 0, n;
        uint8_t tmp[65536];

        if (!f) {
                printf("not ok %d - %s: %s\n", ++n_run, path, strerror(errno));
                return -1;
        }
        while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
                if (size + n > cap) {
                        cap = size + n;
                        data = xrealloc(data, cap);
                }
                memcpy(data + size, tmp, n);
                size += n;
        }
        fclose(f);
        if (!data)
                data = xmalloc(1); /* libFuzzer passes a valid pointer for empty inputs too */
        current = path;
        LLVMFuzzerTestOneInput(data, size);
        current = NULL;
        free(data);
        printf("ok %d - %s\n", ++n_run, path);
        n_passed++;
        return 0;
}

static int cmp_str(const void *a, const void *b)
{
        return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path)
{
        struct stat st;
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;
        int r = 0;

        if (stat(path, &st) < 0) {
                printf("not ok %d - %s: %s\n", ++n_run, path, strerror(errno));
                return -1;
        }
        if (!S_ISDIR(st.st_mode))
                return run_file(path);
        d = opendir(path);
        if (!d) {
                printf("not ok %d - %s: %s\n", ++n_run, path, strerror(errno));
                return -1;
        }
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.')
                        continue;
                names = xrealloc(names, (n + 1) * sizeof(*names));
                names[n++] = xasprintf("%s/%s", path, de->d_name);
        }
        closedir(d);
        qsort(names, n, sizeof(*names), cmp_str);
        for (size_t i = 0; i < n; i++) {
                if (run_path(names[i]) < 0)
                        r = -1;
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char **argv)
{
        const char *base = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        int failed = 0;

        setvbuf(stdout, NULL, _IOLBF, 0);
        if (__sanitizer_set_death_callback) {
                /* keep the sanitizer's own SEGV handler; it does not catch abort() */
                __sanitizer_set_death_callback(report_death);
                signal(SIGABRT, on_fatal_signal);
        } else {
                signal(SIGSEGV, on_fatal_signal);
                signal(SIGBUS, on_fatal_signal);
                signal(SIGFPE, on_fatal_signal);
                signal(SIGILL, on_fatal_signal);
                signal(SIGABRT, on_fatal_signal);
        }

        if (argc > 1) {
                for (int i = 1; i < argc; i++)
                        run_path(argv[i]);
        } else {
                char dir[PATH_MAX];
                snprintf(dir, sizeof(dir), "tests/fuzz/corpus/%s", strncmp(base, "fuzz_", 5) ? base : base + 5);
                run_path(dir);
                if (n_run == 0)
                        printf("not ok 1 - %s: empty corpus\n", dir), n_run = 1;
        }
        failed = n_run - n_passed;
        printf("1..%d\n%d passed, %d failed\n", n_run, n_passed, failed);
        return failed ? 1 : 0;
}
