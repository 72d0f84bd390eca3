/* oci_spec.h - the OCI runtime spec (a bundle's config.json) of a
 * container: a pure function of the container_spec and the host paths the
 * agent prepared for it.  The security settings (capabilities, seccomp,
 * masked paths, devices) and the reasons for them are in
 * docs/design/containers.md. */
#ifndef TESSERA_AGENT_OCI_SPEC_H
#define TESSERA_AGENT_OCI_SPEC_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"

struct container_spec;

#define OCI_CPU_PERIOD_US 100000
#define OCI_DEFAULT_SHM ((int64_t)64 << 20)
#define OCI_DEFAULT_PIDS 4096
#define OCI_DEFAULT_NOFILE 1048576

/* What the agent prepared on the host for one container. */
struct oci_spec_host {
        const char *rootfs;        /* the overlay's merged dir */
        const char *cgroups_path;  /* "/tessera/<id>" */
        const char *netns;         /* a network namespace file; NULL: a new one (loopback only) */
        const char *cpu_online;    /* a file of "0-(n-1)" bound over /sys/devices/system/cpu/{online,
                                      possible,present}; NULL: none */
        const char *runner_dir;    /* bound at CONTAINER_RUNNER_DIR; NULL: none */
        const char *hosts;         /* bound at /etc/hosts; NULL: none */
        const char *hostname_file; /* bound at /etc/hostname; NULL: none */
        bool swap_limit;           /* the host can limit memory+swap */
        uint32_t userns_base;      /* a user namespace: ids 0.. are host ids userns_base..; 0: none */
        uint32_t userns_size;      /* how many ids it maps */
};

/* The number of cores the container is told it has: the allotted cores,
 * else the cpu slot rounded up, else 0 (no limit, nothing is told). */
int oci_spec_cpu_count(const struct container_spec *spec);

/* The "0-(n-1)" text of the cpu_online file, newline-terminated. */
void oci_spec_cpu_online_text(int n, char *buf, size_t len);

/* Build config.json.  EINVAL for a spec that cannot be run (no args, a
 * relative mount destination, a bad device).  OUT ret - caller owns. */
int oci_spec_build(const struct container_spec *spec, const struct oci_spec_host *host, json_t **ret,
                   struct tess_error **err);

/* The default seccomp profile (oci_seccomp.c). */
json_t *oci_seccomp_profile(void);

#endif
