/* vfolder_hosts.c - storage host lists (see vfolder_hosts.h). */
#include "common/compat.h"

#include <ctype.h>

#include "common/vfolder_hosts.h"

bool vf_host_name_valid(const char *s)
{
        size_t n = strlen(s);

        if (n < 1 || n > 64 || !isalnum((unsigned char)s[0]))
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
                        return false;
        return true;
}

int vf_hosts_parse(const char *spec, struct vf_hosts *ret, struct tess_error **err)
{
        _cleanup_free_ char *copy = xstrdup(spec ? spec : "");
        char *save = NULL;

        *ret = (struct vf_hosts){ 0 };
        for (char *item = strtok_r(copy, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
                while (*item == ' ')
                        item++;
                char *eq = strchr(item, '=');
                if (!eq || eq == item || eq[1] != '/') {
                        vf_hosts_release(ret);
                        return tess_err(err, EINVAL, "vfolder_hosts: '%.128s' is not NAME=/absolute/path", item);
                }
                *eq = '\0';
                size_t len = strlen(eq + 1);
                while (len > 1 && eq[len] == '/') /* trailing slashes */
                        eq[len--] = '\0';
                if (!vf_host_name_valid(item) || vf_hosts_find(ret, item)) {
                        vf_hosts_release(ret);
                        return tess_err(err, EINVAL, "vfolder_hosts: '%.64s' is not a valid, unique host name", item);
                }
                ret->v = xrealloc(ret->v, (ret->n + 1) * sizeof(*ret->v));
                ret->v[ret->n++] = (struct vf_host){ xstrdup(item), xstrdup(eq + 1) };
        }
        return 0;
}

void vf_hosts_release(struct vf_hosts *h)
{
        for (size_t i = 0; i < h->n; i++) {
                free(h->v[i].name);
                free(h->v[i].path);
        }
        free(h->v);
        *h = (struct vf_hosts){ 0 };
}

const struct vf_host *vf_hosts_find(const struct vf_hosts *h, const char *name)
{
        for (size_t i = 0; name && i < h->n; i++)
                if (streq(h->v[i].name, name))
                        return &h->v[i];
        return NULL;
}
