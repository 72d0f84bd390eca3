/* public_hosts.h - the host names a signed request may be made for.
 *
 * A request's signature covers its Host header, so a request signed for
 * another server (a phishing front, another Tessera) verifies here too
 * unless the manager knows its own names.  The list is the manager's
 * `public_hosts` setting: names or addresses, `*.suffix` for every
 * subdomain, `*` for any; without it, the names this machine is reached by
 * (localhost, its host name, the addresses of its interfaces, the listen
 * address).  Ports are not compared: a front may publish another port. */
#ifndef TESS_PUBLIC_HOSTS_H
#define TESS_PUBLIC_HOSTS_H

#include <stdbool.h>

struct public_hosts;

/* From the setting (comma-separated, or NULL for this machine's names) and
 * the manager's listen address. */
struct public_hosts *public_hosts_new(const char *setting, const char *listen);
struct public_hosts *public_hosts_free(struct public_hosts *h);

/* Is the Host header's name (port and brackets aside, any case) one of ours? */
bool public_hosts_allow(const struct public_hosts *h, const char *host_header);

/* The list, comma-separated, for a log line ("*" for any). */
const char *public_hosts_describe(const struct public_hosts *h);

#endif
