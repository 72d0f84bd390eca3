/* image_recipe.h - the recipe of `tessera image build` (docs/images.md).
 *
 * A recipe is a text file of `key = value` lines, the syntax of conf.h
 * (`#` comments, blank lines, values may be double-quoted), naming a Debian
 * suite to debootstrap, the packages to add, and the image's config:
 *
 *     name = python              tag = 3.11
 *     suite = bookworm           variant = minbase
 *     mirror = http://deb.debian.org/debian      (optional)
 *     packages = python3 ca-certificates          (space separated)
 *     cmd = /usr/bin/python3     entrypoint = ...  (space separated words)
 *     workdir = /home/work
 *     env.LANG = C.UTF-8         (one line per variable)
 *     label.ai.backend.kernelspec = 1              (one line per label)
 *
 * The parser is pure (no I/O) and bounded: at most RECIPE_LINES_MAX
 * lines, keys of RECIPE_KEY_MAX and values of RECIPE_VALUE_MAX bytes. */
#ifndef TESS_CLI_IMAGE_RECIPE_H
#define TESS_CLI_IMAGE_RECIPE_H

#include <stddef.h>

#include "common/buf.h"
#include "common/error.h"

#define RECIPE_LINES_MAX 4096
#define RECIPE_KEY_MAX   256
#define RECIPE_VALUE_MAX 8192

struct recipe_kv {
        char *key, *value;
};

struct recipe {
        char *name, *tag, *suite, *variant, *mirror, *workdir;
        char **packages, **cmd, **entrypoint; /* NULL-terminated; never NULL after parsing */
        struct recipe_kv *env, *labels;       /* in file order, keys unique */
        size_t n_env, n_labels;
};

/* Parse recipe text; `file` names it in errors ("file:line: message").
 * Required: name, suite.  Defaults: tag "latest", variant "minbase",
 * workdir "/home/work"; mirror NULL (the builder picks one).
 * OUT ret - caller owns; release with recipe_release()
 * RET 0, or -EINVAL */
int recipe_parse(const char *text, size_t len, const char *file, struct recipe *ret, struct tess_error **err);
void recipe_release(struct recipe *r);
/* The recipe in canonical form (sorted labels and env, one key a line),
 * which parses back to the same recipe. */
void recipe_print(const struct recipe *r, struct buf *out);

#endif
