/* bootstrap.c - first start on an empty database.
 *
 * Creates domain `default`, project `default`, resource group `default`
 * (open to the default domain), keypair resource policy `default`, and the
 * superadmin admin@tessera.local, member of the default project, with its
 * main keypair.  Credentials come from TESSERA_ADMIN_ACCESS_KEY (20 chars),
 * TESSERA_ADMIN_SECRET_KEY (40) and TESSERA_ADMIN_PASSWORD, or are
 * generated, printed once and written to STATE_DIR/admin-credentials (0600). */
#include "common/compat.h"

#include "common/buf.h"
#include "common/crypto.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/timeutil.h"
#include "manager/accounts/model.h"
#include "manager/core/manager.h"
#include "manager/db/db.h"
#include "manager/main.h"
#include "manager/vfolder/vfolder.h"

#define ADMIN_EMAIL "admin@tessera.local"

static int create_defaults(struct manager *m, const char *ak, const char *sk, const char *pw, char ret_ak[21],
                           char ret_sk[41], struct tess_error **err)
{
        char did[UUID_STR_LEN], pid[UUID_STR_LEN], rgid[UUID_STR_LEN], uid[UUID_STR_LEN];
        int64_t now = now_usec();
        int r;

        uuid_generate_str(did);
        uuid_generate_str(pid);
        uuid_generate_str(rgid);
        _cleanup_free_ char *hosts = vf_host_perms_all_text(m->conf.vfolder_default_host);
        r = DBQ(m->db,
                "INSERT INTO domains(name, id, description, allowed_vfolder_hosts, created_at, modified_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                NULL, err, DB_TEXT("default"), DB_TEXT(did), DB_TEXT("the default domain"), DB_TEXT(hosts),
                DB_INT(now), DB_INT(now));
        if (r >= 0)
                r = DBQ(m->db, "INSERT INTO keypair_resource_policies(name, created_at) VALUES (?, ?)", NULL, err,
                        DB_TEXT("default"), DB_INT(now));
        if (r >= 0)
                r = DBQ(m->db,
                        "INSERT INTO projects(id, name, domain_name, description, created_at, modified_at)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        NULL, err, DB_TEXT(pid), DB_TEXT("default"), DB_TEXT("default"),
                        DB_TEXT("the default project"), DB_INT(now), DB_INT(now));
        if (r >= 0)
                r = DBQ(m->db, "INSERT INTO resource_groups(name, id, description, created_at) VALUES (?, ?, ?, ?)",
                        NULL, err, DB_TEXT("default"), DB_TEXT(rgid), DB_TEXT("the default resource group"),
                        DB_INT(now));
        if (r >= 0)
                r = DBQ(m->db, "INSERT INTO resource_group_domains(resource_group, domain_name) VALUES (?, ?)", NULL,
                        err, DB_TEXT("default"), DB_TEXT("default"));
        if (r < 0)
                return r;
        struct new_user u = {
                .email = ADMIN_EMAIL,
                .username = "admin",
                .password = pw,
                .domain = "default",
                .role = "superadmin",
                .full_name = "Administrator",
        };
        r = model_create_user(m, &u, uid, err);
        if (r >= 0)
                r = model_add_member(m, pid, uid, err);
        if (r >= 0)
                r = model_create_keypair(m, uid, "default", true, ak, sk, ret_ak, ret_sk, err);
        return r;
}

static bool env_or_generated(const char *name, size_t want_len, char *out, size_t outlen, void (*gen)(char *),
                             struct tess_error **err, int *r)
{
        const char *v = secure_getenv(name);
        if (v && *v) {
                if (want_len && strlen(v) != want_len) {
                        *r = tess_err(err, EINVAL, "%s must be %zu characters long", name, want_len);
                        return false;
                }
                snprintf(out, outlen, "%s", v);
                return false;
        }
        gen(out);
        return true;
}

static void gen_access(char *out)
{
        generate_access_key(out);
}

static void gen_secret(char *out)
{
        generate_secret_key(out);
}

static void gen_password(char *out)
{
        random_string(out, 20, "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789");
}

int manager_bootstrap(struct manager *m, struct tess_error **err)
{
        _cleanup_rows_ struct db_rows *rows = NULL;
        char ak[64], sk[64], pw[300], got_ak[21], got_sk[41];
        int r = 0;

        r = db_query(m->db, "SELECT COUNT(*) AS n FROM domains", NULL, 0, &rows, err);
        if (r < 0)
                return r;
        if (db_get_int(rows, 0, "n") > 0) {
                if (m->dev)
                        printf("Admin credentials: %s/admin-credentials (e-mail %s)\n", m->conf.state_dir,
                               ADMIN_EMAIL);
                return 0;
        }
        r = 0;
        bool gen_ak = env_or_generated("TESSERA_ADMIN_ACCESS_KEY", 20, ak, sizeof(ak), gen_access, err, &r);
        if (r < 0)
                return r;
        bool gen_sk = env_or_generated("TESSERA_ADMIN_SECRET_KEY", 40, sk, sizeof(sk), gen_secret, err, &r);
        if (r < 0)
                return r;
        bool gen_pw = env_or_generated("TESSERA_ADMIN_PASSWORD", 0, pw, sizeof(pw), gen_password, err, &r);
        if (r < 0)
                return r;
        r = db_begin(m->db, err);
        if (r < 0)
                return r;
        r = create_defaults(m, ak, sk, pw, got_ak, got_sk, err);
        if (r < 0) {
                db_rollback(m->db);
                return tess_err_wrap(err, "creating the default domain, project and superadmin");
        }
        r = db_commit(m->db, err);
        if (r < 0)
                return r;
        log_notice("first start: created domain, project, resource group and keypair policy 'default' and "
                   "superadmin '%s'",
                   ADMIN_EMAIL);
        if (!(gen_ak || gen_sk || gen_pw))
                return 0;

        /* Print generated credentials once, and keep them for the operator. */
        _cleanup_free_ char *path = xasprintf("%s/admin-credentials", m->conf.state_dir);
        struct buf b = BUF_INIT;
        buf_printf(&b,
                   "# Tessera superadmin credentials, created %s\n"
                   "# Use with: set -a; . %s; set +a\n"
                   "BACKEND_ENDPOINT=http://%s\n"
                   "BACKEND_ACCESS_KEY=%s\n"
                   "BACKEND_SECRET_KEY=%s\n"
                   "TESSERA_ADMIN_EMAIL=%s\n"
                   "TESSERA_ADMIN_PASSWORD=%s\n",
                   "at first start", path, m->conf.listen, got_ak, got_sk, ADMIN_EMAIL, pw);
        r = fs_write_file_atomic(path, b.data, b.len, 0600, err);
        buf_release(&b);
        if (r < 0)
                return tess_err_wrap(err, "saving admin credentials");
        printf("Tessera superadmin (shown once; also saved to %s):\n"
               "  email:      %s\n"
               "  password:   %s\n"
               "  access key: %s\n"
               "  secret key: %s\n",
               path, ADMIN_EMAIL, pw, got_ak, got_sk);
        fflush(stdout);
        return 0;
}
