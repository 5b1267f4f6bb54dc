/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Option value parsing shared by the commands. Return 0 or -EINVAL/-ERANGE.
 * And one formatting of times. */
#ifndef STKREC_SRC_UTIL_H
#define STKREC_SRC_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct cap_header;

/* The leading decimal digits of s (at least one, no sign), for a number
 * with a unit after it; *end points past them. 0, -EINVAL or -ERANGE. */
int parse_leading_u64(const char *s, uint64_t *v, char **end);
/* Whole decimal number in [min, max]; no sign, no trailing junk. */
int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Size with optional K, M, G suffix (powers of 1024). */
int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* "1,2,3" into a newly allocated array (each in [min, max]); no empty
 * item (",1", "1,,2", "1,"). */
int parse_u32_list(const char *s, uint32_t min, uint32_t max, uint32_t **out, int *n);
/* "offcpu,cpu,bio" (any of them, no empty item) into a mask of
 * 1 << CAP_KIND_*: record -e and every report -e take the same strings. */
int parse_kinds(const char *s, unsigned *mask);
/* The option getopt just refused, as the user wrote it: "-x" for a short
 * one (also inside a bundle such as "-vx", where arg, argv[optind - 1], is
 * the word before it), arg for a long one. */
const char *opt_name(int optopt, const char *arg, char *buf, size_t len);
/* Seconds, possibly fractional ("1.5"), into ns. */
int parse_seconds(const char *s, uint64_t *ns);
/* A duration, possibly fractional, with a unit (ns, us, ms, s, m, h; none:
 * seconds), e.g. "500ms", "1.5s", "2m", into ns. */
int parse_duration(const char *s, uint64_t *ns);

/* A capture's monotonic ns as ISO 8601 UTC wall clock with milliseconds
 * ("2026-01-02T03:04:05.000Z"), via the header's clock offset; "unknown"
 * before 1970. */
void fmt_walltime(const struct cap_header *h, uint64_t mono, char *buf, size_t len);

#endif
