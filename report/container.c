// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Containers named from cgroup paths (container.h). The path is cut into
 * its components; each is held against one table of patterns, in order:
 * a prefix, a suffix, what lies between them (a 64-hex container ID, a pod
 * UID, a name) and where the component must sit (below /docker, below
 * kubepods, below a pod). The first row that matches a component names
 * it; the path's container is then chosen by kind (container.h).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include "report/container.h"

enum part_form {
	FORM_HEX64,   /* exactly 64 lowercase hex digits */
	FORM_UID,     /* 8-4-4-4-12 lowercase hex, '-' or '_' between */
	FORM_NAME,    /* any nonempty bytes: the whole component is the name */
	FORM_ESCAPED, /* any nonempty bytes, systemd's \xHH unescaped */
};

enum part_where {
	WHERE_ANY,
	WHERE_DOCKER,   /* the parent component is "docker" (cgroupfs driver) */
	WHERE_KUBEPODS, /* below a component starting "kubepods" */
	WHERE_POD,      /* below a pod's component */
};

struct pattern {
	const char *prefix, *suffix;
	enum part_form form;
	enum part_where where;
	enum container_kind kind;
};

/* The layouts, each written once. A conmon's scope ("crio-conmon-ID",
 * "libpod-conmon-ID") fails FORM_HEX64: it is not the container. */
static const struct pattern patterns[] = {
	{ "docker-", ".scope", FORM_HEX64, WHERE_ANY, CONTAINER_DOCKER },
	{ "cri-containerd-", ".scope", FORM_HEX64, WHERE_ANY, CONTAINER_CONTAINERD },
	{ "crio-", ".scope", FORM_HEX64, WHERE_ANY, CONTAINER_CRIO },
	{ "libpod-", ".scope", FORM_HEX64, WHERE_ANY, CONTAINER_PODMAN },
	{ "", "", FORM_HEX64, WHERE_DOCKER, CONTAINER_DOCKER },
	{ "", "", FORM_HEX64, WHERE_POD, CONTAINER_CRI },
	{ "kubepods-pod", ".slice", FORM_UID, WHERE_ANY, CONTAINER_POD },
	{ "kubepods-burstable-pod", ".slice", FORM_UID, WHERE_ANY, CONTAINER_POD },
	{ "kubepods-besteffort-pod", ".slice", FORM_UID, WHERE_ANY, CONTAINER_POD },
	{ "pod", "", FORM_UID, WHERE_KUBEPODS, CONTAINER_POD },
	{ "machine-", ".scope", FORM_ESCAPED, WHERE_ANY, CONTAINER_MACHINE },
	{ "", ".service", FORM_NAME, WHERE_ANY, CONTAINER_SERVICE },
};

static const char *const runtimes[CONTAINER_KIND_MAX] = {
	[CONTAINER_NONE] = "", [CONTAINER_DOCKER] = "docker",
	[CONTAINER_CONTAINERD] = "containerd", [CONTAINER_CRIO] = "cri-o",
	[CONTAINER_PODMAN] = "podman", [CONTAINER_CRI] = "cri", [CONTAINER_POD] = "pod",
	[CONTAINER_SERVICE] = "systemd", [CONTAINER_MACHINE] = "machine",
};

/* Where the walk is: what the components above the current one were. */
struct walk {
	bool parent_docker, kubepods, pod;
};

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static bool hex64(const char *s, size_t n, char *out)
{
	size_t i;

	if (n != 64)
		return false;
	for (i = 0; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	memcpy(out, s, n);
	out[n] = '\0';
	return true;
}

/* A pod UID as the kubelet writes it: dashes (cgroupfs) or underscores
 * (systemd, which reserves '-'); given back with dashes. */
static bool uid(const char *s, size_t n, char *out)
{
	size_t i;

	if (n != CONTAINER_UID_MAX)
		return false;
	for (i = 0; i < n; i++) {
		bool sep = i == 8 || i == 13 || i == 18 || i == 23;

		if (sep ? s[i] != '-' && s[i] != '_' : !is_hex(s[i]))
			return false;
		out[i] = sep ? '-' : s[i];
	}
	out[n] = '\0';
	return true;
}

/* systemd escapes '-' and other bytes of a unit name part as \xHH. */
static bool unescape(const char *s, size_t n, char *out)
{
	size_t i, o = 0;
	int hi, lo;

	for (i = 0; i < n; i++) {
		if (s[i] == '\\' && n - i >= 4 && s[i + 1] == 'x' &&
		    (hi = hexval(s[i + 2])) >= 0 && (lo = hexval(s[i + 3])) >= 0 &&
		    (hi || lo)) {
			out[o++] = (char)(hi << 4 | lo);
			i += 3;
		} else {
			out[o++] = s[i];
		}
	}
	out[o] = '\0';
	return o > 0;
}

static bool form_ok(enum part_form form, const char *s, size_t n, const char *comp,
		    size_t clen, struct container *c)
{
	switch (form) {
	case FORM_HEX64:
		return hex64(s, n, c->id);
	case FORM_UID:
		return uid(s, n, c->pod_uid);
	case FORM_NAME:
		if (!n || clen > CONTAINER_NAME_MAX)
			return false;
		memcpy(c->id, comp, clen);
		c->id[clen] = '\0';
		return true;
	case FORM_ESCAPED:
		return n && n <= CONTAINER_NAME_MAX && unescape(s, n, c->id);
	}
	return false;
}

static bool where_ok(enum part_where where, const struct walk *w)
{
	switch (where) {
	case WHERE_ANY:
		return true;
	case WHERE_DOCKER:
		return w->parent_docker;
	case WHERE_KUBEPODS:
		return w->kubepods;
	case WHERE_POD:
		return w->pod;
	}
	return false;
}

/* The first row naming component comp (clen bytes) into *c, or NONE. */
static enum container_kind match(const char *comp, size_t clen, const struct walk *w,
				 struct container *c)
{
	size_t i, pl, sl;

	for (i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
		const struct pattern *p = &patterns[i];

		pl = strlen(p->prefix);
		sl = strlen(p->suffix);
		if (clen < pl + sl || memcmp(comp, p->prefix, pl) ||
		    memcmp(comp + clen - sl, p->suffix, sl) || !where_ok(p->where, w))
			continue;
		memset(c, 0, sizeof(*c));
		if (form_ok(p->form, comp + pl, clen - pl - sl, comp, clen, c)) {
			c->kind = p->kind;
			return p->kind;
		}
	}
	return CONTAINER_NONE;
}

static int rank(enum container_kind k)
{
	switch (k) {
	case CONTAINER_NONE:
		return -1;
	case CONTAINER_SERVICE:
		return 0;
	case CONTAINER_MACHINE:
		return 1;
	case CONTAINER_POD:
		return 2;
	default:
		return 3; /* a runtime's container */
	}
}

/* Which of two names a path keeps: a runtime's container, else a pod, a
 * machine, a service; among equals the outermost, but for services the
 * innermost (user@1000.service/.../app.service is app.service). */
static bool better(const struct container *have, enum container_kind k)
{
	return rank(k) > rank(have->kind) ||
	       (k == CONTAINER_SERVICE && have->kind == CONTAINER_SERVICE);
}

enum container_kind container__parse(const char *path, struct container *out)
{
	char pod_uid[CONTAINER_UID_MAX + 1] = "";
	struct walk w = { 0 };
	struct container c;
	const char *p = path, *e;
	enum container_kind k;

	memset(out, 0, sizeof(*out));
	while (p && *p) {
		e = strchrnul(p, '/');
		if (e > p) {
			k = match(p, e - p, &w, &c);
			if (k == CONTAINER_POD && !*pod_uid)
				memcpy(pod_uid, c.pod_uid, sizeof(pod_uid));
			if (k != CONTAINER_NONE && better(out, k))
				*out = c;
			w.pod |= k == CONTAINER_POD;
			w.kubepods |= !strncmp(p, "kubepods", 8);
			w.parent_docker = e - p == 6 && !memcmp(p, "docker", 6);
		}
		p = *e ? e + 1 : e;
	}
	if (out->kind != CONTAINER_NONE)
		memcpy(out->pod_uid, pod_uid, sizeof(pod_uid));
	return out->kind;
}

const char *container__runtime(enum container_kind kind)
{
	return kind < CONTAINER_KIND_MAX ? runtimes[kind] : "";
}

char *container__name(const struct container *c, char *buf, size_t len)
{
	bool hex = c->kind != CONTAINER_SERVICE && c->kind != CONTAINER_MACHINE;

	if (c->kind == CONTAINER_NONE || c->kind >= CONTAINER_KIND_MAX)
		snprintf(buf, len, "-");
	else if (c->kind == CONTAINER_POD)
		snprintf(buf, len, "pod:%s", c->pod_uid);
	else
		snprintf(buf, len, "%s:%.*s", runtimes[c->kind], hex ? 12 : CONTAINER_NAME_MAX,
			 c->id);
	return buf;
}
