/*
 * log.h - the guard's messages on stderr. Formats into a stack buffer and
 * writes with one write(2): no allocation, no stdio locks, safe on any thread.
 */
#ifndef GMG_BASE_LOG_H
#define GMG_BASE_LOG_H

enum gmg_log_level { GMG_LOG_QUIET = 0, GMG_LOG_INFO = 1, GMG_LOG_DEBUG = 2 };

extern int gmg_log_level;

void gmg_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define gmg_debug(...) do { if (gmg_log_level >= GMG_LOG_DEBUG) gmg_log(GMG_LOG_DEBUG, __VA_ARGS__); } while (0)
#define gmg_info(...) do { if (gmg_log_level >= GMG_LOG_INFO) gmg_log(GMG_LOG_INFO, __VA_ARGS__); } while (0)

/* Always printed: configuration errors, refusals. */
void gmg_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
