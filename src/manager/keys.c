/* keys.c - the manager's two keys, each 32 random bytes stored as 64 hex
 * characters in a file of mode 0600, created on first start:
 *   - the master key (conf.master_key_file) seals keypair secret keys at
 *     rest; managers sharing one PostgreSQL must share this file too;
 *   - the cluster secret (conf.cluster_secret_file) authenticates agents
 *     and the manager to each other; every agent is given a copy. */
#include "common/compat.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/crypto.h"
#include "common/fs.h"
#include "manager/core/manager.h"
#include "manager/main.h"

static int load_key(const char *path, const char *what, unsigned char key[MASTER_KEY_LEN], struct tess_error **err)
{
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r;

        r = fs_read_file(path, 4096, &text, &len, err);
        if (r == -ENOENT) {
                char hex[2 * MASTER_KEY_LEN + 2];
                tess_error_free(*err);
                *err = NULL;
                r = random_bytes(key, MASTER_KEY_LEN, err);
                if (r < 0)
                        return r;
                for (int i = 0; i < MASTER_KEY_LEN; i++)
                        snprintf(hex + 2 * i, 3, "%02x", key[i]);
                hex[2 * MASTER_KEY_LEN] = '\n';
                hex[2 * MASTER_KEY_LEN + 1] = '\0';
                return fs_write_file_atomic(path, hex, strlen(hex), 0600, err);
        }
        if (r < 0)
                return tess_err_wrap(err, "reading the %s", what);
        while (len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '))
                len--;
        if (len != 2 * MASTER_KEY_LEN)
                return tess_err(err, EINVAL, "%s '%s' must hold %d hex characters", what, path, 2 * MASTER_KEY_LEN);
        for (int i = 0; i < MASTER_KEY_LEN; i++) {
                int hi = hex_digit_value((unsigned char)text[2 * i]),
                    lo = hex_digit_value((unsigned char)text[2 * i + 1]);
                if (hi < 0 || lo < 0)
                        return tess_err(err, EINVAL, "%s '%s' is not hex", what, path);
                key[i] = (unsigned char)(hi << 4 | lo);
        }
        return 0;
}

int manager_load_master_key(struct manager *m, struct tess_error **err)
{
        return load_key(m->conf.master_key_file, "master key", m->master_key, err);
}

int manager_load_cluster_secret(struct manager *m, struct tess_error **err)
{
        unsigned char key[MASTER_KEY_LEN];
        int r = load_key(m->conf.cluster_secret_file, "cluster secret", key, err);

        if (r < 0)
                return r;
        for (int i = 0; i < MASTER_KEY_LEN; i++)
                snprintf(m->cluster_secret + 2 * i, 3, "%02x", key[i]);
        return 0;
}
