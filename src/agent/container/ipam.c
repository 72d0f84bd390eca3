/* ipam.c - see ipam.h. */
#include "common/compat.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>

#include "agent/container/ipam.h"
#include "common/fs.h"

int ipam_parse_cidr(const char *cidr, uint32_t *ret_addr, int *ret_prefix, struct tess_error **err)
{
        char addr[IPAM_ADDR_LEN];
        const char *slash = strchr(cidr, '/');
        struct in_addr in;
        char *end;
        long prefix;

        if (!slash || (size_t)(slash - cidr) >= sizeof(addr))
                return tess_err(err, EINVAL, "'%s' is not an address/prefix", cidr);
        memcpy(addr, cidr, (size_t)(slash - cidr));
        addr[slash - cidr] = '\0';
        errno = 0;
        prefix = strtol(slash + 1, &end, 10);
        if (inet_pton(AF_INET, addr, &in) != 1 || errno || *end || end == slash + 1 || prefix < 8 || prefix > 30)
                return tess_err(err, EINVAL, "'%s' is not an IPv4 address/prefix (prefix 8 to 30)", cidr);
        *ret_addr = ntohl(in.s_addr);
        *ret_prefix = (int)prefix;
        return 0;
}

void ipam_format(uint32_t addr, char out[IPAM_ADDR_LEN])
{
        struct in_addr in = { .s_addr = htonl(addr) };
        inet_ntop(AF_INET, &in, out, IPAM_ADDR_LEN);
}

/* The owner recorded in a claim, or NULL. */
static char *claim_owner(const char *path)
{
        char *data = NULL;
        size_t len;

        if (fs_read_file(path, 256, &data, &len, NULL) < 0)
                return NULL;
        data[strcspn(data, "\n")] = '\0';
        return data;
}

static bool owner_gone(const char *owners_dir, const char *owner)
{
        _cleanup_free_ char *p = NULL;
        struct stat st;

        if (!owner || !*owner || strchr(owner, '/') || streq(owner, ".") || streq(owner, ".."))
                return true;
        p = xasprintf("%s/%s", owners_dir, owner);
        return stat(p, &st) < 0 && errno == ENOENT;
}

/* Take `path` (writing `line`, the claim): 1 taken, 0 held by someone
 * else, < 0 error. */
static int try_claim(const char *path, const char *line, const char *owners_dir, struct tess_error **err)
{
        _cleanup_free_ char *held = NULL;
        int fd, r;

        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST)
                return tess_err(err, errno, "creating '%s': %s", path, strerror(errno));
        if (fd >= 0) {
                close(fd);
        } else {
                held = claim_owner(path);
                if (!owner_gone(owners_dir, held))
                        return 0;
        }
        /* no fsync: after a reboot every claim's container is gone anyway */
        r = fs_write_file_replace(path, line, strlen(line), 0644, err);
        return r < 0 ? r : 1;
}

/* Hold <dir>/lock: returns the fd whose closing releases it. */
static int lock_dir(const char *dir, struct tess_error **err)
{
        _cleanup_free_ char *lock = xasprintf("%s/lock", dir);
        _cleanup_close_ int fd = -1;
        int r;

        r = fs_mkdir_p(dir, 0755, err);
        if (r < 0)
                return r;
        fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0)
                return tess_err(err, errno, "opening '%s': %s", lock, strerror(errno));
        while (flock(fd, LOCK_EX) < 0)
                if (errno != EINTR)
                        return tess_err(err, errno, "locking '%s': %s", lock, strerror(errno));
        return TAKE_FD(fd);
}

/* A live claim's group and its number, from "owner\ngroup\nnumber\n";
 * false for a stale claim or one without a group (made before groups). */
static bool claim_group(const char *dir, const char *name, const char *owners_dir, char **ret_group,
                        unsigned *ret_number)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, name), *data = NULL;
        char *group, *number, *end;
        unsigned long n;
        size_t len;

        if (fs_read_file(path, 512, &data, &len, NULL) < 0)
                return false;
        group = strchr(data, '\n');
        if (!group)
                return false;
        *group++ = '\0';
        number = strchr(group, '\n');
        if (!number || owner_gone(owners_dir, data))
                return false;
        *number++ = '\0';
        errno = 0;
        n = strtoul(number, &end, 10);
        if (errno || end == number || (*end && *end != '\n') || n == 0 || n > UINT32_MAX)
                return false;
        *ret_group = xstrdup(group);
        *ret_number = (unsigned)n;
        return true;
}

/* The number of `group` on this bridge: its live members' one, else the
 * lowest no live group uses.  Called under the lock. */
static int group_number(const char *dir, const char *group, const char *owners_dir, unsigned *ret,
                        struct tess_error **err)
{
        _cleanup_free_ unsigned *used = NULL;
        size_t n = 0, cap = 0;
        struct dirent *de;
        DIR *d;

        d = opendir(dir);
        if (!d)
                return tess_err(err, errno, "reading '%s': %s", dir, strerror(errno));
        while ((de = readdir(d))) {
                _cleanup_free_ char *g = NULL;
                unsigned num;
                if (de->d_name[0] == '.' || streq(de->d_name, "lock") ||
                    !claim_group(dir, de->d_name, owners_dir, &g, &num))
                        continue;
                if (streq(g, group)) {
                        closedir(d);
                        *ret = num;
                        return 0;
                }
                if (n == cap)
                        used = xrealloc(used, (cap = cap ? 2 * cap : 64) * sizeof(*used));
                used[n++] = num;
        }
        closedir(d);
        /* the lowest free number is at most n + 1 */
        _cleanup_free_ bool *taken = xcalloc(n + 2, sizeof(*taken));
        for (size_t i = 0; i < n; i++)
                if (used[i] <= n + 1)
                        taken[used[i]] = true;
        for (unsigned k = 1;; k++)
                if (!taken[k]) {
                        *ret = k;
                        return 0;
                }
}

int ipam_alloc(const char *dir, const char *cidr, const char *owner, const char *group, const char *owners_dir,
               char ret_ip[IPAM_ADDR_LEN], unsigned *ret_group, struct tess_error **err)
{
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *line = NULL;
        uint32_t gw, mask, net;
        unsigned number = 0;
        int prefix, r;

        if (!*group || strchr(group, '\n') || strlen(group) > 256)
                return tess_err(err, EINVAL, "network group '%s': 1 to 256 characters, one line", group);
        r = ipam_parse_cidr(cidr, &gw, &prefix, err);
        if (r < 0)
                return r;
        fd = lock_dir(dir, err);
        if (fd < 0)
                return fd;
        r = group_number(dir, group, owners_dir, &number, err);
        if (r < 0)
                return r;
        line = xasprintf("%s\n%s\n%u\n", owner, group, number);
        mask = prefix ? ~0U << (32 - prefix) : 0;
        net = gw & mask;
        for (uint32_t a = net + 1; a < (net | ~mask); a++) {
                char ip[IPAM_ADDR_LEN];
                _cleanup_free_ char *path = NULL;
                if (a == gw)
                        continue;
                ipam_format(a, ip);
                path = xasprintf("%s/%s", dir, ip);
                r = try_claim(path, line, owners_dir, err);
                if (r < 0)
                        return r;
                if (r > 0) {
                        memcpy(ret_ip, ip, IPAM_ADDR_LEN);
                        *ret_group = number;
                        return 0; /* closing fd drops the lock */
                }
        }
        return tess_err(err, ENOSPC, "no free address in '%s'", cidr);
}

void ipam_release(const char *dir, const char *ip, const char *owner)
{
        _cleanup_free_ char *path = xasprintf("%s/%s", dir, ip);
        _cleanup_free_ char *held = NULL;
        _cleanup_close_ int fd UNUSED = lock_dir(dir, NULL); /* held until return */

        held = claim_owner(path);
        if (held && streq(held, owner))
                unlink(path);
}
