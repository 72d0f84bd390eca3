/* admin.c - placeholder route table; replaced by the admin CRUD engine. */
#include "../common/compat.h"

#include "admin.h"

const struct route admin_routes[] = {
        {},
};
