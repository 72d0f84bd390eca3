/* crypto.h - random identifiers, keypair generation, password hashing and
 * the at-rest encryption of keypair secrets.
 *
 * Passwords are hashed with scrypt (memory-hard; N=2^15, r=8, p=1, 32 MiB).
 * Secret keys must be recoverable to verify HMAC signatures, so they are
 * stored encrypted (AES-256-GCM) under the manager's master key, never in
 * the clear. */
#ifndef TESS_CRYPTO_H
#define TESS_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define UUID_STR_LEN 37
#define MASTER_KEY_LEN 32

int random_bytes(void *p, size_t n, struct tess_error **err);
/* Random version-4 UUID, lower case, into out[37]. */
void uuid_generate_str(char out[UUID_STR_LEN]);
bool uuid_valid(const char *s);
/* Random string of n chars from alphabet (n+1 bytes written). */
void random_string(char *out, size_t n, const char *alphabet);
void generate_access_key(char out[21]); /* "AKIA" + 16 of [A-Z0-9] */
void generate_secret_key(char out[41]); /* 40 of [A-Za-z0-9] */

/* "scrypt$15$8$1$<salt b64>$<hash b64>"; caller frees. */
char *password_hash(const char *password);
bool password_verify(const char *password, const char *stored);

/* Encrypt a secret under key; returns "v1:<base64(nonce|ciphertext|tag)>". */
char *secret_seal(const unsigned char key[MASTER_KEY_LEN], const char *plain);
/* Decrypt; -EINVAL if tampered or not ours. *ret is malloc'd. */
int secret_open(const unsigned char key[MASTER_KEY_LEN], const char *sealed, char **ret, struct tess_error **err);

/* Standard base64 with padding; caller frees. */
char *base64_encode(const void *data, size_t n);
/* Decode len characters of padded base64 into out (cap bytes); the
 * decoded length, or -1 for bad input or too little room. */
int base64_decode(const char *s, size_t len, unsigned char *out, size_t cap);

/* The value of a hex digit [0-9a-fA-F], or -1 for any other c (EOF too). */
int hex_digit_value(int c);
/* Hex SHA-256 of data into out[65]. */
void sha256_hex(const void *data, size_t n, char out[65]);

#endif
