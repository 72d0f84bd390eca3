/* yaml_json.h - YAML documents from users (Backend.AI's session templates,
 * later model definitions) as JSON values, parsed by libyaml.
 *
 * Mappings become objects (keys must be scalars: their text), sequences
 * arrays, and plain scalars are resolved as PyYAML (YAML 1.1) resolves
 * them, which is what the files were written for: null, ~ and nothing are
 * null; true/false/yes/no/on/off (in their three cases) booleans;
 * decimal, 0x, 0b and leading-0 octal integers with an optional sign and _
 * separators (that fit 64 bits); decimal floats with a dot (and a signed
 * exponent); anything else a string (.inf and .nan too: JSON has no such
 * number).  Quoted and
 * block scalars, and scalars tagged !!str, are always strings.
 *
 * Refused with EINVAL and a message naming the line: aliases (and so the
 * "billion laughs"), nesting deeper than YAML_JSON_DEPTH_MAX, more than
 * YAML_JSON_NODES_MAX nodes, a non-scalar or duplicate mapping key, and
 * text that is not valid UTF-8 YAML.  JSON text is YAML too. */
#ifndef TESS_YAML_JSON_H
#define TESS_YAML_JSON_H

#include <stddef.h>

#include <jansson.h>

#include "common/error.h"

#define YAML_JSON_DEPTH_MAX 64
#define YAML_JSON_NODES_MAX 100000

/* The documents of text: one JSON value each, in an array (*ret, caller
 * owns; empty when text holds no document). */
int yaml_to_json(const char *text, size_t len, json_t **ret, struct tess_error **err);

#endif
