// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "format/capture.h"
#include "src/util.h"
#include "util/array.h"

int parse_leading_u64(const char *s, uint64_t *v, char **end)
{
	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, end, 10);
	return errno == ERANGE ? -ERANGE : 0;
}

int parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	uint64_t v;
	char *end;
	int err = parse_leading_u64(s, &v, &end);

	if (err)
		return err;
	if (*end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_size(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned shift = 0;
	uint64_t v;
	char *end;
	int err = parse_leading_u64(s, &v, &end);

	if (err)
		return err;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	if (v > (UINT64_MAX >> shift))
		return -ERANGE;
	v <<= shift;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int parse_u32_list(const char *s, uint32_t min, uint32_t max, uint32_t **out, int *n)
{
	uint32_t *arr = NULL;
	size_t cnt = 0, cap = 0;
	int err = 0;
	char *dup, *tok, *save = NULL;
	uint64_t v;

	if (!s || !*s)
		return -EINVAL;
	dup = strdup(s);
	if (!dup)
		return -ENOMEM;
	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		err = parse_u64(tok, min, max, &v);
		if (err)
			break;
		err = ARRAY_PUSH(arr, cnt, cap, (uint32_t)v);
		if (err)
			break;
	}
	free(dup);
	/* strtok skips empty items: "1,,2" and ",1" are refused here */
	if (!err && (!cnt || s[strlen(s) - 1] == ',' || s[0] == ',' || strstr(s, ",,")))
		err = -EINVAL;
	if (err) {
		free(arr);
		return err;
	}
	*out = arr;
	*n = (int)cnt;
	return 0;
}

int parse_seconds(const char *s, uint64_t *ns)
{
	double v;
	char *end;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || end == s)
		return -EINVAL;
	if (v < 0 || v > 1e9)
		return -ERANGE;
	*ns = (uint64_t)(v * 1e9 + 0.5);
	return 0;
}

int parse_duration(const char *s, uint64_t *ns)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = { { "", 1e9 }, { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		      { "m", 60e9 }, { "h", 3600e9 } };
	double v;
	char *end;
	size_t i;

	if (!s || !(isdigit((unsigned char)*s) || *s == '.'))
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (v * units[i].ns > 1e18)
			return -ERANGE;
		*ns = (uint64_t)(v * units[i].ns + 0.5);
		return 0;
	}
	return -EINVAL;
}

static int kind_of(const char *s, size_t len)
{
	int k;

	for (k = 0; k < CAP_KIND_MAX; k++)
		if (k != CAP_KIND_SIDEBAND && strlen(cap_kind_name(k)) == len &&
		    !strncmp(s, cap_kind_name(k), len))
			return k;
	return -1;
}

int parse_kinds(const char *s, unsigned *mask)
{
	unsigned m = 0;
	size_t len;
	int k;

	if (!s)
		return -EINVAL;
	for (;;) {
		len = strcspn(s, ",");
		k = kind_of(s, len);
		if (k < 0)
			return -EINVAL; /* unknown, or an empty item */
		m |= 1u << k;
		if (!s[len])
			break;
		s += len + 1;
	}
	*mask = m;
	return 0;
}

const char *opt_name(int optopt, const char *arg, char *buf, size_t len)
{
	if (!optopt || !strncmp(arg, "--", 2))
		return arg;
	snprintf(buf, len, "-%c", optopt);
	return buf;
}

void fmt_walltime(const struct cap_header *h, uint64_t mono, char *buf, size_t len)
{
	int64_t real = (int64_t)mono + h->clock_offset;
	time_t sec = real / 1000000000;
	struct tm tm;
	size_t n;

	if (real < 0 || !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "unknown");
		return;
	}
	n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%03dZ", (int)(real % 1000000000 / 1000000));
}
