/* registry_scan.h - reading what a container registry holds into rows of
 * the images table (registry_scan.c), for a rescan (registry_rescan.c).
 *
 * The scan lists the repositories of the registry's catalog under its
 * project prefix, the tags of each, and for each tag the manifest: an
 * image manifest is one image, an index one image per linux platform.
 * From each image's config come its architecture (Backend.AI's names:
 * x86_64, aarch64) and labels; its size is the sum of its layers.  A
 * repository or tag that fails is recorded and the scan goes on; only a
 * catalog that cannot be read fails the scan.
 *
 * It blocks (HTTP) and touches no database: run it in a worker thread. */
#ifndef TESS_MANAGER_REGISTRY_SCAN_H
#define TESS_MANAGER_REGISTRY_SCAN_H

#include <stddef.h>

#include <jansson.h>

#include "common/error.h"

/* A container_registries row, with its password opened. */
struct registry_scan_opts {
        const char *name;                /* "127.0.0.1:5000": images are named "<name>/<repository>" */
        const char *url;                 /* "http://127.0.0.1:5000" */
        const char *project;             /* "" or a repository prefix ("team", "team/stable") */
        const char *username, *password; /* NULL or "": anonymous */
};

struct registry_scan {
        /* [{"name", "tag", "architecture", "digest", "labels": {...}, "size_bytes"}] */
        json_t *images;
        /* [{"repository", "tag"?, "error"}]: what could not be read */
        json_t *errors;
        /* {"<repository>": true, "<repository>:<tag>": true}: what failed, so
         * that its images may not be taken for gone */
        json_t *failed;
        size_t repositories; /* in the scope */
};

/* Called after each repository: done of total, the one just scanned. */
typedef void (*registry_scan_progress_fn)(void *data, size_t done, size_t total, const char *repository);

/* Scan the registry.
 * OUT ret - release with registry_scan_release() (on failure too)
 * RET 0; -errno when the catalog could not be read */
int registry_scan_run(const struct registry_scan_opts *o, registry_scan_progress_fn progress, void *data,
                      struct registry_scan *ret, struct tess_error **err);
void registry_scan_release(struct registry_scan *s);

/* Is the repository within the project prefix ("" holds everything)? */
bool registry_scan_in_project(const char *project, const char *repository);

#endif
