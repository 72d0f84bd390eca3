/* import_manifest.h - what an image import commits, read from outside
 * bytes (the uploader's reference, manifest and config): the reference
 * split into the images row's name and tag, the blobs the manifest names,
 * and from the config the architecture and labels.  Pure (no store, no
 * database): fuzzed by tests/fuzz/fuzz_import_manifest.c. */
#ifndef TESS_IMPORT_MANIFEST_H
#define TESS_IMPORT_MANIFEST_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"

#define IMPORT_MANIFEST_MAX ((size_t)4 << 20) /* as registries */
#define IMPORT_CONFIG_MAX   ((size_t)16 << 20)
#define IMPORT_LAYERS_MAX   256

struct import_blob {
        char digest[72]; /* "sha256:<hex>" */
        int64_t size;
};

struct import_image {
        char *name, *tag; /* "team/app", "1.0" */
        char *media_type; /* of the manifest */
        struct import_blob config;
        struct import_blob *layers;
        size_t n_layers;
        int64_t size_bytes; /* the layers' sum */
        char *architecture; /* Backend.AI's name: x86_64, aarch64, ...; from the config */
        json_t *labels;     /* object of strings, from the config */
};

/* Split "name[:tag]" (tag "latest" when absent) of a reference, in
 * Docker's familiar form (no "docker.io/", "docker.io/library/"); refuses
 * digests, empty names, upper case, and what Docker's grammar refuses.
 * RET 0 or -EINVAL with a message quoting the reference. */
int import_parse_reference(const char *ref, struct import_image *img, struct tess_error **err);
/* Parse an OCI image manifest or a Docker v2 schema 2 manifest: its config
 * and layers (sha256 digests, sizes >= 0).  An index is refused (the
 * client sends the platform's manifest).  -EINVAL with why. */
int import_parse_manifest(const char *p, size_t n, struct import_image *img, struct tess_error **err);
/* Parse the image config: architecture (mapped to Backend.AI's names),
 * labels; the number of diff_ids must be the manifest's layers.  -EINVAL. */
int import_parse_config(const char *p, size_t n, struct import_image *img, struct tess_error **err);
void import_image_release(struct import_image *img);

#endif
