/* config.c - the client's config file, written by `tessera login`
 * (see client.h).  Its keys are a conf.h table, so reading, writing and
 * their comments come from one place. */
#include "common/compat.h"

#include <sys/stat.h>

#include "common/buf.h"
#include "common/conf.h"
#include "common/fs.h"
#include "cli/client.h"

static const struct conf_opt config_opts[] = {
        CONF_OPT("endpoint", CONF_T_STR, struct cli_config, endpoint, NULL, 0, 0, false, "URL of the manager"),
        CONF_OPT("access_key", CONF_T_STR, struct cli_config, access_key, NULL, 0, 0, false,
                 "access key (20 characters)"),
        CONF_OPT("secret_key", CONF_T_STR, struct cli_config, secret_key, NULL, 0, 0, false,
                 "secret key (40 characters); keep this file private"),
        {},
};

int config_path(char **ret, struct tess_error **err)
{
        const char *xdg = secure_getenv("XDG_CONFIG_HOME"), *home = secure_getenv("HOME");

        if (xdg && xdg[0] == '/')
                *ret = xasprintf("%s/tessera/config", xdg);
        else if (home && *home)
                *ret = xasprintf("%s/.config/tessera/config", home);
        else
                return tess_err(err, ENOENT, "neither XDG_CONFIG_HOME nor HOME is set");
        return 0;
}

int config_load(struct cli_config *ret, struct tess_error **err)
{
        _cleanup_free_ char *path = NULL;
        int r;

        memset(ret, 0, sizeof(*ret));
        if (config_path(&path, NULL) < 0 || access(path, F_OK) < 0)
                return 0;
        r = conf_load_file(config_opts, ret, path, err);
        if (r < 0) {
                config_release(ret);
                return r;
        }
        return 0;
}

int config_save(const struct cli_config *c, struct tess_error **err)
{
        _cleanup_free_ char *path = NULL;
        _cleanup_(buf_release) struct buf text = BUF_INIT;
        int r;

        r = config_path(&path, err);
        if (r < 0)
                return r;
        char *slash = strrchr(path, '/');
        *slash = '\0';
        r = fs_mkdir_p(path, 0700, err);
        *slash = '/';
        if (r < 0)
                return r;
        buf_puts(&text, "# tessera client configuration, written by 'tessera login'\n");
        conf_print(config_opts, c, &text);
        r = fs_write_file_atomic(path, text.data, text.len, 0600, err);
        explicit_bzero(text.data, text.len);
        return r;
}

int config_remove(struct tess_error **err)
{
        _cleanup_free_ char *path = NULL;
        int r;

        r = config_path(&path, err);
        if (r < 0)
                return r;
        if (unlink(path) < 0) {
                if (errno == ENOENT)
                        return 0;
                return tess_err(err, errno, "removing '%s': %s", path, strerror(errno));
        }
        return 1;
}

void config_release(struct cli_config *c)
{
        if (c->secret_key)
                explicit_bzero(c->secret_key, strlen(c->secret_key));
        conf_release(config_opts, c);
}
