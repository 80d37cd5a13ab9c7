/* A minimal logger compatible with the part of microlog (github.com/an-dr/microlog, v7) that the
 * NAAICE reference programs use, so they compile unchanged: ulog_trace/debug/info/warn/error/fatal
 * (printf-style), ulog_output_level_set_all, the ULOG_LEVEL_* levels, ULOG_BUILD_DISABLED, and the
 * LOG_LEVEL default the reference's build defines (ULOG_LEVEL_INFO). Messages go to stderr, one
 * line each ("INFO  text"). Header-only: the level is per translation unit. */
#ifndef NAA_HOST_COMPAT_ULOG_H
#define NAA_HOST_COMPAT_ULOG_H

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef enum ulog_level {
  ULOG_LEVEL_TRACE = 0,
  ULOG_LEVEL_DEBUG = 1,
  ULOG_LEVEL_INFO = 2,
  ULOG_LEVEL_WARN = 3,
  ULOG_LEVEL_ERROR = 4,
  ULOG_LEVEL_FATAL = 5
} ulog_level;

typedef enum ulog_status { ULOG_STATUS_OK = 0, ULOG_STATUS_ERROR = -1 } ulog_status;

#ifndef LOG_LEVEL
#define LOG_LEVEL ULOG_LEVEL_INFO
#endif

static inline ulog_level* ulog_level_slot_(void) {
  static ulog_level level = LOG_LEVEL;
  return &level;
}

static inline ulog_status ulog_output_level_set_all(ulog_level level) {
  if (level > ULOG_LEVEL_FATAL) {
    return ULOG_STATUS_ERROR;
  }
  *ulog_level_slot_() = level;
  return ULOG_STATUS_OK;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline void
ulog_log_(ulog_level level, const char* fmt, ...) {
  static const char* const names[] = {"TRACE", "DEBUG", "INFO ", "WARN ", "ERROR", "FATAL"};
  if (level < *ulog_level_slot_() || level > ULOG_LEVEL_FATAL) return;
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "%s ", names[level]);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  const size_t n = strlen(fmt);
  if (n == 0 || fmt[n - 1] != '\n') fputc('\n', stderr);
}

#ifdef ULOG_BUILD_DISABLED
#define ulog_trace(...) ((void)0)
#define ulog_debug(...) ((void)0)
#define ulog_info(...) ((void)0)
#define ulog_warn(...) ((void)0)
#define ulog_error(...) ((void)0)
#define ulog_fatal(...) ((void)0)
#else
#define ulog_trace(...) ulog_log_(ULOG_LEVEL_TRACE, __VA_ARGS__)
#define ulog_debug(...) ulog_log_(ULOG_LEVEL_DEBUG, __VA_ARGS__)
#define ulog_info(...) ulog_log_(ULOG_LEVEL_INFO, __VA_ARGS__)
#define ulog_warn(...) ulog_log_(ULOG_LEVEL_WARN, __VA_ARGS__)
#define ulog_error(...) ulog_log_(ULOG_LEVEL_ERROR, __VA_ARGS__)
#define ulog_fatal(...) ulog_log_(ULOG_LEVEL_FATAL, __VA_ARGS__)
#endif

#endif /* NAA_HOST_COMPAT_ULOG_H */
