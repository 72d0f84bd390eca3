/* slots.h - resource slots as fixed-point integers, never floating point.
 *
 * A slot value is an int64 counted in the slot's quantum: `cpu` in 1/1000
 * core, `mem` in bytes, `cuda.device` in whole GPUs, `cuda.shares` in 1/100
 * fGPU.  SLOT_INFINITY stands for "unlimited".  On the wire (JSON, database)
 * a value is a decimal string ("2", "0.5", "4294967296", "Infinity"), as
 * Backend.AI's ResourceSlot columns are.  Users may write "4g" for memory
 * and numbers as JSON numbers or strings. */
#ifndef TESS_SLOTS_H
#define TESS_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "common/error.h"

#define SLOT_INFINITY INT64_MAX
#define SLOTS_MAX 16
#define SLOT_NAME_MAX 32

enum slot_unit {
        SLOT_UNIT_COUNT,
        SLOT_UNIT_BYTES,
};

struct slot_type {
        const char *name;
        enum slot_unit unit;
        int64_t scale; /* quanta per unit: 1000 for cpu, 100 for cuda.shares */
};

struct slot {
        char name[SLOT_NAME_MAX];
        int64_t value; /* in quanta, or SLOT_INFINITY */
};

/* A small set of named slots; names are unique, order is insertion order. */
struct slots {
        int n;
        struct slot s[SLOTS_MAX];
};

/* The known slot types (cpu, mem, cuda.device, cuda.shares), or NULL. */
const struct slot_type *slot_type_find(const char *name);
/* Scale for any slot name: the known type's, else 1000 (agent-advertised). */
int64_t slot_scale(const char *name);

/* Parse one user value (JSON number or string) for slot `name` into quanta.
 * -EINVAL with a precise message on negative, malformed or too-fine values. */
int slot_parse_value(const char *name, const json_t *v, int64_t *ret, struct tess_error **err);
int slot_parse_string(const char *name, const char *s, int64_t *ret, struct tess_error **err);
/* Format quanta as the canonical decimal string; returns buf. */
char *slot_format(const char *name, int64_t v, char *buf, size_t len);
/* Human form for tables: "2", "4 GiB", "0.5", "∞" is "inf". */
char *slot_format_human(const char *name, int64_t v, char *buf, size_t len);

void slots_init(struct slots *s);
int64_t slots_get(const struct slots *s, const char *name); /* 0 if absent */
bool slots_has(const struct slots *s, const char *name);
int slots_set(struct slots *s, const char *name, int64_t v, struct tess_error **err);
/* a += b, saturating at SLOT_INFINITY. */
int slots_add(struct slots *a, const struct slots *b, struct tess_error **err);
/* True when every slot of `req` fits in `limit` (absent in limit = unlimited
 * when missing_is_unlimited, else 0). */
bool slots_fit(const struct slots *req, const struct slots *limit, bool missing_is_unlimited,
               const char **ret_slot);
/* Parse a JSON object of slot -> value.  When `only_known` is set an unknown
 * slot name is -EINVAL. */
int slots_from_json(struct slots *s, const json_t *obj, bool only_known, struct tess_error **err);
/* Parse a JSON text as stored in the database ("{}" or NULL gives empty). */
int slots_from_text(struct slots *s, const char *text, struct tess_error **err);
/* New JSON object of decimal strings. */
json_t *slots_to_json(const struct slots *s);
/* Stored text form (caller frees). */
char *slots_to_text(const struct slots *s);

#endif
