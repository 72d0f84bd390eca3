/* cgroup_tune.c - favordynmods on the host's cgroup2 mount (cgroup_tune.h
 * says why).
 *
 * A remount replaces both the mount's own flags and the file system's
 * options with what it is given, so both are read back from the mount's
 * line of mountinfo (proc(5)):
 *
 *   36 35 0:31 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw,nsdelegate
 *   id parent dev root mount-point     mount options         optional... - type  source  super options */
#include "common/compat.h"

#include <sys/mount.h>

#include "agent/container/cgroup_tune.h"
#include "common/buf.h"

#define MOUNTINFO_FIELDS 16

static const struct {
        const char *name;
        unsigned long flag;
} mount_flags[] = {
        { "ro", MS_RDONLY },         { "nosuid", MS_NOSUID },           { "nodev", MS_NODEV },
        { "noexec", MS_NOEXEC },     { "noatime", MS_NOATIME },         { "nodiratime", MS_NODIRATIME },
        { "relatime", MS_RELATIME }, { "strictatime", MS_STRICTATIME },
};

/* Split s in place at spaces into at most max fields. */
static int split_fields(char *s, char **fields, int max)
{
        int n = 0;
        char *save = NULL;

        for (char *f = strtok_r(s, " \n", &save); f && n < max; f = strtok_r(NULL, " \n", &save))
                fields[n++] = f;
        return n;
}

/* Is word one of the words of list (separated by any of seps)? */
static bool has_word(const char *list, const char *seps, const char *word)
{
        _cleanup_free_ char *copy = xstrdup(list);
        char *save = NULL;

        for (char *w = strtok_r(copy, seps, &save); w; w = strtok_r(NULL, seps, &save))
                if (streq(w, word))
                        return true;
        return false;
}

int cgroup_favordynmods_remount(const char *mountinfo_line, char **ret_target, unsigned long *ret_flags,
                                char **ret_data)
{
        _cleanup_free_ char *line = xstrdup(mountinfo_line);
        char *f[MOUNTINFO_FIELDS];
        int n = split_fields(line, f, MOUNTINFO_FIELDS), sep = 6;

        while (sep < n && !streq(f[sep], "-"))
                sep++; /* past the optional fields */
        if (n < 6 || sep + 3 >= n || !streq(f[sep + 1], "cgroup2") || has_word(f[sep + 3], ",", "favordynmods"))
                return 0;
        if (strchr(f[4], '\\'))
                return 0; /* an escaped mount point (a space in it): not the host's cgroup mount */

        unsigned long flags = MS_REMOUNT;
        char *save = NULL;
        for (char *o = strtok_r(f[5], ",", &save); o; o = strtok_r(NULL, ",", &save))
                for (size_t i = 0; i < ARRAY_SIZE(mount_flags); i++)
                        if (streq(o, mount_flags[i].name))
                                flags |= mount_flags[i].flag;

        struct buf data = BUF_INIT;
        save = NULL;
        for (char *o = strtok_r(f[sep + 3], ",", &save); o; o = strtok_r(NULL, ",", &save))
                if (!streq(o, "rw") && !streq(o, "ro"))
                        buf_printf(&data, "%s,", o); /* rw/ro of the super block follow the flags */
        buf_puts(&data, "favordynmods");
        *ret_target = xstrdup(f[4]);
        *ret_flags = flags;
        *ret_data = buf_detach(&data, NULL);
        return 1;
}

bool cgroup_favordynmods_offered(const char *features)
{
        return has_word(features, " \n", "favordynmods");
}

/* The first cgroup2 line of mountinfo, or NULL (caller frees). */
static char *cgroup2_line(const char *mountinfo)
{
        _cleanup_fclose_ FILE *fp = fopen(mountinfo, "re");
        char *line = NULL;
        size_t cap = 0;

        if (!fp)
                return NULL;
        while (getline(&line, &cap, fp) > 0)
                if (strstr(line, " - cgroup2 "))
                        return line;
        free(line);
        return NULL;
}

int cgroup_favordynmods_set(const char *mountinfo, const char *features, struct tess_error **err)
{
        _cleanup_free_ char *line = cgroup2_line(mountinfo), *target = NULL, *data = NULL;
        _cleanup_fclose_ FILE *fp = fopen(features, "re");
        char offered[512];
        unsigned long flags;
        size_t n;

        if (!line || !fp)
                return 0;
        n = fread(offered, 1, sizeof(offered) - 1, fp);
        offered[n] = '\0';
        if (!cgroup_favordynmods_offered(offered) || cgroup_favordynmods_remount(line, &target, &flags, &data) == 0)
                return 0;
        if (mount(NULL, target, NULL, flags, data) < 0)
                return tess_err(err, errno, "remounting %s with favordynmods: %s", target, strerror(errno));
        return 1;
}
