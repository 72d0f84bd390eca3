/* service_ports.h - the apps an image declares in its
 * `ai.backend.service-ports` label, as Backend.AI writes them
 * (common/service_ports.py there):
 *
 *   jupyter:http:8888,tensorboard:http:6006,vscode:http:[8180,8181]
 *
 * Each item is NAME:PROTOCOL:PORT or NAME:PROTOCOL:[PORT,...]; protocols
 * are tcp, http, preopen, vnc and rdp (pty items are skipped, as
 * Backend.AI does); ports are 1025-65535 and unique across the label;
 * blanks around items and ports are allowed, empty items are skipped (an
 * empty label declares nothing).  Names are 1-32 of [A-Za-z0-9_-], starting with a letter or
 * digit, and unique. */
#ifndef TESS_SERVICE_PORTS_H
#define TESS_SERVICE_PORTS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"

#define SERVICE_PORTS_LABEL    "ai.backend.service-ports"
#define SERVICE_PORTS_MAX      32 /* apps in one label */
#define SERVICE_PORT_NAME_MAX  32
#define SERVICE_APP_PORTS_MAX  8 /* ports of one app */
#define SERVICE_PORTS_TEXT_MAX 4096

enum service_protocol {
        SERVICE_TCP,
        SERVICE_HTTP,
        SERVICE_PREOPEN,
        SERVICE_VNC,
        SERVICE_RDP,
        _SERVICE_PROTOCOL_MAX,
        _SERVICE_PROTOCOL_INVALID = -EINVAL,
};

struct service_port {
        char name[SERVICE_PORT_NAME_MAX + 1];
        enum service_protocol protocol;
        int ports[SERVICE_APP_PORTS_MAX]; /* the first is the app's own */
        int nports;
};

struct service_ports {
        struct service_port apps[SERVICE_PORTS_MAX];
        int n;
};

/* Parse len bytes of a label (not NUL-terminated).  RET 0 with *ret
 * filled (in the label's order); -EINVAL naming the item at fault. */
int service_ports_parse(const char *p, size_t len, struct service_ports *ret, struct tess_error **err);

/* The app called name, or NULL. */
const struct service_port *service_ports_find(const struct service_ports *sp, const char *name);

/* Whether an app's name is well-formed (the rule above). */
bool service_port_name_valid(const char *name);

const char *service_protocol_to_string(enum service_protocol p);
enum service_protocol service_protocol_from_string(const char *s, size_t len);

#endif
