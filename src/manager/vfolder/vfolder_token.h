/* vfolder_token.h - the tokens of folder uploads and downloads
 * (POST /folders/{name}/request-upload, request-download; used by the
 * public tus and download routes, docs/vfolder-transfers.md).
 *
 * A token names one operation on one path of one folder for one user
 * acting through one keypair, until it expires:
 *   base64url(payload) "." base64url(HMAC-SHA256(key, base64url(payload)))
 *   payload = "v2\n<op>\n<folder id>\n<user id>\n<access key>\n<expires>\n<size>\n<path>"
 * with op upload, download or archive; expires in Unix seconds; size the
 * upload's length (0 for downloads); path cleaned (beneath_user_path).
 * The token only says what was asked: every use checks again that the
 * keypair and its user are active and that the user still has the
 * folder permission the operation needs (api_vfolder_transfer.c), so a
 * revocation, an unshare or a deactivation ends it at once.  (v1 tokens,
 * without the keypair, are refused: a client asks for another.)
 * The key is derived from the manager's master key, so a token holds
 * across restarts and never outlives a key change.  The MAC is checked,
 * in constant time, before any byte of the payload is parsed. */
#ifndef TESS_VFOLDER_TOKEN_H
#define TESS_VFOLDER_TOKEN_H

#include <stdbool.h>
#include <stdint.h>

#include "common/beneath.h"
#include "common/crypto.h"
#include "common/error.h"

#define VF_TOKEN_KEY_LEN 32
#define VF_TOKEN_MAX     8192 /* longest token text accepted */

/* Default (and longest) lifetimes, seconds: an upload must survive resumes. */
#define VF_TOKEN_UPLOAD_TTL   86400
#define VF_TOKEN_DOWNLOAD_TTL 900

enum vf_token_op {
        VFT_UPLOAD = 1,
        VFT_DOWNLOAD,
        VFT_ARCHIVE, /* a download as an archive, even of one file */
};

#define VF_TOKEN_AK_MAX 20 /* an access key's length */

struct vf_token {
        enum vf_token_op op;
        char folder[UUID_STR_LEN];
        char user[UUID_STR_LEN];
        char access_key[VF_TOKEN_AK_MAX + 1]; /* the keypair (or web login's keypair) that asked */
        int64_t expires; /* Unix seconds */
        int64_t size;    /* uploads: the file's length */
        char path[BENEATH_PATH_MAX + 1];
};

/* HMAC-SHA256(master, "tessera vfolder token v1"). */
void vf_token_key(const unsigned char master[MASTER_KEY_LEN], unsigned char key[VF_TOKEN_KEY_LEN]);
/* The token text (malloc'd). */
char *vf_token_make(const unsigned char key[VF_TOKEN_KEY_LEN], const struct vf_token *t);
/* Verify and parse outside bytes; `now` in Unix seconds.  -EACCES with a
 * reason for anything but a valid, unexpired token of ours. */
int vf_token_parse(const unsigned char key[VF_TOKEN_KEY_LEN], const char *s, int64_t now, struct vf_token *ret,
                   struct tess_error **err);

#endif
