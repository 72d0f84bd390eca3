/* session_template.c - see session_template.h. */
#include "common/compat.h"

#include "common/buf.h"
#include "common/yaml_json.h"
#include "manager/api/api.h"
#include "manager/sessions/session_template.h"

/* ---- checking a template ---- */

/* The object at names in obj (NULL when absent); EINVAL naming where when
 * it is something else. */
static int get_object(const json_t *obj, const char *where, const char *const *names, json_t **ret,
                      struct tess_error **err)
{
        *ret = api_field(obj, names);
        if (*ret && !json_is_object(*ret))
                return tess_err(err, EINVAL, "%s%s: must be a mapping", where, names[0]);
        return 0;
}

/* Every value of obj (when there) a string, at most max long. */
static int check_strings(const json_t *obj, const char *where, size_t max, struct tess_error **err)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)obj, k, v)
                if (!json_is_string(v) || json_string_length(v) > max)
                        return tess_err(err, EINVAL, "%s.%s: must be text of at most %zu characters", where, k, max);
        return 0;
}

static int check_git(const json_t *git, struct tess_error **err)
{
        const char *repo = NULL, *s = NULL, *dest = NULL;
        int r;

        if (api_field(git, NAMES("credential")))
                return tess_err(err, EINVAL,
                                "spec.kernel.git.credential: templates hold no passwords; clone a public "
                                "repository, or keep the credential in a folder");
        if ((r = api_get_string(git, NAMES("repository"), 2048, &repo, err)) < 0 ||
            (r = api_get_string(git, NAMES("branch"), 256, &s, err)) < 0 ||
            (r = api_get_string(git, NAMES("commit"), 64, &s, err)) < 0 ||
            (r = api_get_string(git, NAMES("destination_dir", "destinationDir"), 1024, &dest, err)) < 0)
                return tess_err_wrap(err, "spec.kernel.git");
        if (!repo || !*repo)
                return tess_err(err, EINVAL, "spec.kernel.git.repository: required");
        if (dest && *dest != '/')
                return tess_err(err, EINVAL, "spec.kernel.git.destination_dir: must be an absolute path");
        return 0;
}

static int check_kernel(const json_t *kernel, struct tess_error **err)
{
        const char *image = NULL, *s = NULL;
        json_t *environ, *run, *git;
        int r;

        if (!kernel)
                return tess_err(err, EINVAL, "spec.kernel: required");
        if ((r = api_get_string(kernel, NAMES("image"), 512, &image, err)) < 0 ||
            (r = api_get_string(kernel, NAMES("architecture"), 32, &s, err)) < 0)
                return tess_err_wrap(err, "spec.kernel");
        if (!image || !*image)
                return tess_err(err, EINVAL, "spec.kernel.image: required");
        if ((r = get_object(kernel, "spec.kernel.", NAMES("environ"), &environ, err)) < 0 ||
            (r = get_object(kernel, "spec.kernel.", NAMES("run"), &run, err)) < 0 ||
            (r = get_object(kernel, "spec.kernel.", NAMES("git"), &git, err)) < 0)
                return r;
        if (environ && (r = check_strings(environ, "spec.kernel.environ", 4096, err)) < 0)
                return r;
        if (run && ((r = api_get_string(run, NAMES("bootstrap"), 65536, &s, err)) < 0 ||
                    (r = api_get_string(run, NAMES("startup_command", "startup", "startupCommand"), 65536, &s, err)) <
                            0))
                return tess_err_wrap(err, "spec.kernel.run");
        return git ? check_git(git, err) : 0;
}

static int check_mounts(const json_t *mounts, struct tess_error **err)
{
        const char *k;
        json_t *v;

        json_object_foreach((json_t *)mounts, k, v)
                if (!json_is_null(v) && !json_is_string(v))
                        return tess_err(err, EINVAL, "spec.mounts.%s: must be a path in the session, or empty", k);
        return 0;
}

static int check_template(const json_t *t, struct tess_error **err)
{
        const char *kind = NULL, *version = NULL, *name = NULL, *s = NULL;
        json_t *meta, *spec, *kernel, *mounts, *resources;
        int r;

        if (!json_is_object(t))
                return tess_err(err, EINVAL, "a template must be a mapping");
        if ((r = api_get_string(t, NAMES("kind"), 64, &kind, err)) < 0 ||
            (r = api_get_string(t, NAMES("api_version", "apiVersion"), 64, &version, err)) < 0)
                return r;
        if (!kind || (!streq(kind, "taskTemplate") && !streq(kind, "task_template")))
                return tess_err(err, EINVAL, "kind: must be taskTemplate");
        if (!version)
                return tess_err(err, EINVAL, "api_version: required (v1)");
        if ((r = get_object(t, "", NAMES("metadata"), &meta, err)) < 0 ||
            (r = get_object(t, "", NAMES("spec"), &spec, err)) < 0)
                return r;
        if (!meta || !spec)
                return tess_err(err, EINVAL, "%s: required", meta ? "spec" : "metadata");
        if ((r = api_get_string(meta, NAMES("name"), SESSION_TEMPLATE_NAME_MAX, &name, err)) < 0 ||
            (r = api_get_string(meta, NAMES("tag"), 256, &s, err)) < 0)
                return tess_err_wrap(err, "metadata");
        if (!name || !*name)
                return tess_err(err, EINVAL, "metadata.name: required");
        if ((r = api_get_string(spec, NAMES("type", "session_type", "sessionType"), 16, &s, err)) < 0 ||
            (r = api_get_string(spec, NAMES("scaling_group", "scalingGroup"), 64, &s, err)) < 0)
                return tess_err_wrap(err, "spec");
        if (api_field(spec, NAMES("agent_list", "agentList")))
                return tess_err(err, EINVAL, "spec.agent_list: the scheduler places sessions; name a scaling_group");
        if ((r = get_object(spec, "spec.", NAMES("kernel"), &kernel, err)) < 0 ||
            (r = get_object(spec, "spec.", NAMES("mounts"), &mounts, err)) < 0 ||
            (r = get_object(spec, "spec.", NAMES("resources"), &resources, err)) < 0)
                return r;
        if (mounts && (r = check_mounts(mounts, err)) < 0)
                return r;
        return check_kernel(kernel, err);
}

/* ---- payloads ---- */

/* {name, template} of t (checked) onto out */
static int add_template(json_t *out, json_t *t, const char *name, struct tess_error **err)
{
        int r = check_template(t, err);

        if (r < 0)
                return r;
        if (!name)
                name = json_string_value(json_object_get(json_object_get(t, "metadata"), "name"));
        if (!*name || strlen(name) > SESSION_TEMPLATE_NAME_MAX)
                return tess_err(err, EINVAL, "name: 1 to %d characters", SESSION_TEMPLATE_NAME_MAX);
        json_array_append_new(out, json_pack("{s:s, s:O}", "name", name, "template", t));
        return 0;
}

/* Backend.AI's list form: [{template, name?}] */
static int add_listed(json_t *out, const json_t *list, struct tess_error **err)
{
        size_t i;
        json_t *e;

        json_array_foreach(list, i, e) {
                const char *name = NULL;
                if (!json_is_object(e) || !json_object_get(e, "template"))
                        return tess_err(err, EINVAL, "session_templates[%zu]: must be {template, name?}", i);
                if (api_get_string(e, NAMES("name"), SESSION_TEMPLATE_NAME_MAX, &name, err) < 0 ||
                    add_template(out, json_object_get(e, "template"), name, err) < 0)
                        return tess_err_wrap(err, "session_templates[%zu]", i);
        }
        return 0;
}

int session_templates_parse(const char *payload, size_t len, json_t **ret, bool *ret_single,
                            struct tess_error **err)
{
        json_t *docs = NULL, *out = json_array(), *d;
        size_t i;
        int r = 0;

        *ret = NULL;
        *ret_single = false;
        if (len > SESSION_TEMPLATE_PAYLOAD_MAX) {
                json_decref(out);
                return tess_err(err, EINVAL, "payload: larger than %d bytes", SESSION_TEMPLATE_PAYLOAD_MAX);
        }
        if (yaml_to_json(payload, len, &docs, err) < 0) {
                json_decref(out);
                return tess_err_wrap(err, "payload is neither JSON nor YAML");
        }
        json_array_foreach(docs, i, d) {
                const json_t *list = json_is_array(d) ? d : json_object_get(d, "session_templates");
                if (list && json_is_array(list))
                        r = add_listed(out, list, err);
                else
                        r = add_template(out, d, NULL, err);
                if (r < 0)
                        break;
        }
        *ret_single = json_array_size(docs) == 1 && json_is_object(json_array_get(docs, 0)) &&
                      !json_object_get(json_array_get(docs, 0), "session_templates");
        json_decref(docs);
        if (r == 0 && json_array_size(out) == 0)
                r = tess_err(err, EINVAL, "payload: holds no template");
        if (r == 0 && json_array_size(out) > SESSION_TEMPLATES_AT_ONCE)
                r = tess_err(err, EINVAL, "payload: more than %d templates at once", SESSION_TEMPLATES_AT_ONCE);
        if (r < 0) {
                json_decref(out);
                return r;
        }
        *ret = out;
        return 0;
}

/* ---- the session request ---- */

/* s as one shell word */
static void shell_quote(struct buf *b, const char *s)
{
        buf_putc(b, '\'');
        for (; *s; s++) {
                if (*s == '\'')
                        buf_puts(b, "'\\''");
                else
                        buf_putc(b, *s);
        }
        buf_putc(b, '\'');
}

/* The lines that clone git's repository, before the template's own
 * bootstrap script. */
static void git_lines(struct buf *b, const json_t *git)
{
        const char *repo = json_string_value(api_field(git, NAMES("repository")));
        const char *branch = json_string_value(api_field(git, NAMES("branch")));
        const char *commit = json_string_value(api_field(git, NAMES("commit")));
        const char *dest = json_string_value(api_field(git, NAMES("destination_dir", "destinationDir")));
        _cleanup_free_ char *dflt = NULL;

        if (!dest) {
                const char *base = strrchr(repo, '/') ? strrchr(repo, '/') + 1 : repo;
                size_t n = strlen(base);
                if (n > 4 && streq(base + n - 4, ".git"))
                        n -= 4;
                dflt = xasprintf("/home/work/%.*s", (int)n, n ? base : "repository");
                dest = dflt;
        }
        buf_puts(b, "# the template's git repository\nif [ ! -e ");
        shell_quote(b, dest);
        buf_puts(b, " ]; then\n  git clone");
        if (branch) {
                buf_puts(b, " --branch ");
                shell_quote(b, branch);
        }
        buf_puts(b, " -- ");
        shell_quote(b, repo);
        buf_putc(b, ' ');
        shell_quote(b, dest);
        buf_puts(b, " || exit 1\n");
        if (commit) {
                buf_puts(b, "  git -C ");
                shell_quote(b, dest);
                buf_puts(b, " checkout --detach ");
                shell_quote(b, commit);
                buf_puts(b, " || exit 1\n");
        }
        buf_puts(b, "fi\n");
}

static void set_if(json_t *o, const char *key, json_t *v)
{
        if (v)
                json_object_set(o, key, v);
}

json_t *session_template_request(const json_t *t)
{
        const json_t *meta = json_object_get(t, "metadata"), *spec = json_object_get(t, "spec");
        const json_t *kernel = json_object_get(spec, "kernel"), *run = json_object_get(kernel, "run");
        const json_t *git = json_object_get(kernel, "git"), *mounts = json_object_get(spec, "mounts");
        json_t *body = json_object(), *config = json_object(), *v;
        const char *folder;

        set_if(body, "image", json_object_get(kernel, "image"));
        set_if(body, "architecture", json_object_get(kernel, "architecture"));
        set_if(body, "type", api_field(spec, NAMES("type", "session_type", "sessionType")));
        set_if(body, "tag", json_object_get(meta, "tag"));
        set_if(body, "startupCommand", api_field(run, NAMES("startup_command", "startup", "startupCommand")));
        const char *bootstrap = json_string_value(api_field(run, NAMES("bootstrap")));
        if (git) {
                struct buf b = BUF_INIT;
                git_lines(&b, git);
                if (bootstrap)
                        buf_puts(&b, bootstrap);
                json_object_set_new(body, "bootstrap_script", json_string(b.data));
                buf_release(&b);
        } else if (bootstrap) {
                json_object_set_new(body, "bootstrap_script", json_string(bootstrap));
        }
        set_if(config, "environ", json_object_get(kernel, "environ"));
        set_if(config, "resources", json_object_get(spec, "resources"));
        set_if(config, "scalingGroup", api_field(spec, NAMES("scaling_group", "scalingGroup")));
        if (mounts) {
                json_t *names = json_array(), *map = json_object();
                json_object_foreach((json_t *)mounts, folder, v) {
                        json_array_append_new(names, json_string(folder));
                        if (json_is_string(v))
                                json_object_set(map, folder, v);
                }
                json_object_set_new(config, "mounts", names);
                json_object_set_new(config, "mount_map", map);
        }
        json_object_set_new(body, "config", config);
        return body;
}

/* ---- overlaying a request ---- */

/* The spellings of one field, as session_request.c takes them. */
static const char *const *const spellings[] = {
        NAMES("name", "session_name", "clientSessionToken", "sessionName"),
        NAMES("image", "lang"),
        NAMES("type", "sessionType", "session_type"),
        NAMES("startupCommand", "startup_command"),
        NAMES("bootstrap_script", "bootstrapScript"),
        NAMES("architecture", "arch"),
        NAMES("mount_map", "mountMap"),
        NAMES("scaling_group", "scalingGroup", "resource_group"),
        NAMES("resource_opts", "resourceOpts"),
        NAMES("clusterSize", "cluster_size"),
        NAMES("clusterMode", "cluster_mode"),
};

static void set_replacing(json_t *base, const char *key, json_t *v)
{
        for (size_t i = 0; i < ARRAY_SIZE(spellings); i++)
                for (const char *const *n = spellings[i]; *n; n++)
                        if (streq(*n, key))
                                for (const char *const *m = spellings[i]; *m; m++)
                                        json_object_del(base, *m);
        json_object_set(base, key, v);
}

static bool given(const char *key, const json_t *v)
{
        return !json_is_null(v) && !(streq(key, "mounts") && json_is_array(v) && json_array_size(v) == 0);
}

void session_template_overlay(json_t *base, const json_t *request)
{
        const char *key;
        json_t *v;

        json_object_foreach((json_t *)request, key, v) {
                if (streq(key, "template_id") || streq(key, "templateId") || !given(key, v))
                        continue;
                json_t *cfg = json_object_get(base, "config");
                if (streq(key, "config") && json_is_object(v) && json_is_object(cfg)) {
                        const char *k;
                        json_t *cv;
                        /* other mounts: the template's paths of its own go too */
                        if (given("mounts", json_object_get(v, "mounts")))
                                set_replacing(cfg, "mount_map", json_object());
                        json_object_foreach(v, k, cv)
                                if (given(k, cv))
                                        set_replacing(cfg, k, cv);
                        continue;
                }
                set_replacing(base, key, v);
        }
}
