/* fuzz_layer_unpack.c - a layer blob (a tar; uncompressed, gzip or zstd)
 * unpacked by src/image/image_unpack.c into root/ of a private directory.
 * Whatever the blob holds: the unpack succeeds or fails with an error set;
 * nothing appears beside root/ (the sibling canary/ stays empty, no other
 * entry shows up) nor at the host path the seeds aim a symlink at; no
 * device node is made but overlay whiteouts (char 0/0).  root/ is emptied
 * after each input. */
#include "common/compat.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fuzz.h"
#include "image/image-internal.h"

/* Where the seeds' absolute symlinks point (corpus/layer_unpack/symlink-*). */
#define HOST_TARGET "/tmp/tessera-fuzz-evil"

static char *base, *root, *canary;

static void remove_base(void)
{
        layer_remove(AT_FDCWD, base, NULL);
}

static void setup(void)
{
        base = xstrdup("/tmp/tessera-fuzz-layer.XXXXXX");
        FUZZ_ASSERT(mkdtemp(base) != NULL);
        root = xasprintf("%s/root", base);
        canary = xasprintf("%s/canary", base);
        FUZZ_ASSERT(mkdir(canary, 0755) == 0);
        atexit(remove_base);
}

static size_t entries_of(const char *dir)
{
        DIR *d = opendir(dir);
        struct dirent *de;
        size_t n = 0;

        FUZZ_ASSERT(d != NULL);
        while ((de = readdir(d)))
                n += !streq(de->d_name, ".") && !streq(de->d_name, "..");
        closedir(d);
        return n;
}

static int check_node(const char *path UNUSED, const struct stat *st, int type UNUSED, struct FTW *ftw UNUSED)
{
        FUZZ_ASSERT(!S_ISBLK(st->st_mode));
        FUZZ_ASSERT(!S_ISCHR(st->st_mode) || st->st_rdev == makedev(0, 0));
        FUZZ_ASSERT(!S_ISSOCK(st->st_mode));
        return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        static const struct layer_policy policy = {
                .allow_setuid = true,
                .max_bytes = 4 << 20, /* keeps each input fast */
                .max_entries = 4096,
        };
        struct tess_error *err = NULL;
        char diff_id[IMAGE_DIGEST_SIZE];
        int rootfd, r;

        if (!base)
                setup();
        FUZZ_ASSERT(mkdir(root, 0755) == 0);
        rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        FUZZ_ASSERT(rootfd >= 0);

        r = layer_unpack_mem(rootfd, data, size, &policy, diff_id, &err);
        FUZZ_ASSERT(r == 0 ? err == NULL && image_digest_valid(diff_id) : err != NULL && err->code == -r);
        tess_error_free(err);

        FUZZ_ASSERT(entries_of(canary) == 0);
        FUZZ_ASSERT(entries_of(base) == 2);
        FUZZ_ASSERT(access(HOST_TARGET, F_OK) < 0 && errno == ENOENT);
        FUZZ_ASSERT(nftw(root, check_node, 16, FTW_PHYS) == 0);

        close(rootfd);
        FUZZ_ASSERT(layer_remove(AT_FDCWD, root, NULL) == 0);
        return 0;
}
