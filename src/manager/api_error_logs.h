/* api_error_logs.h - Backend.AI's error logs (/logs/error): errors that
 * clients report to the manager, listed by who may see them
 * (api_error_logs.c says how). */
#ifndef TESS_API_ERROR_LOGS_H
#define TESS_API_ERROR_LOGS_H

#include "manager/api/api.h"

/* The longest of each field (bytes), the most logs kept per user (older
 * ones go as new ones come) and the largest page. */
#define ERROR_LOG_SOURCE_MAX    255
#define ERROR_LOG_MESSAGE_MAX   8192
#define ERROR_LOG_LANG_MAX      64
#define ERROR_LOG_ENV_MAX       8192
#define ERROR_LOG_URL_MAX       2048
#define ERROR_LOG_TRACEBACK_MAX 32768
#define ERROR_LOGS_PER_USER     1000
#define ERROR_LOG_PAGE_MAX      100

void api_error_log_append(struct api_ctx *c); /* POST /logs/error */
void api_error_log_list(struct api_ctx *c);   /* GET /logs/error */
void api_error_log_clear(struct api_ctx *c);  /* POST /logs/error/{id}/clear */

#endif
