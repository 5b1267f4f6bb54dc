// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "src/commands.h"
#include "src/input.h"
#include "src/log.h"

bool input__is_stdin(const char *arg)
{
	return !strcmp(arg, "-");
}

const char *input__name(const char *arg)
{
	return input__is_stdin(arg) ? "<stdin>" : arg;
}

int input__open(struct input *in, const char *cmd, const char *arg)
{
	int err;

	in->arg = arg;
	in->name = input__name(arg);
	in->stream = NULL;
	if (!input__is_stdin(arg))
		return 0;
	/* a capture is binary: a terminal is a pipe forgotten, not a source */
	if (isatty(STDIN_FILENO)) {
		log_usage_error(cmd, "'-' reads a capture from standard input, which is a "
				"terminal: pipe one in, or name a file");
		return EXIT_USAGE;
	}
	err = cap_stream__new(STDIN_FILENO, NULL, &in->stream);
	if (err) {
		log_error("%s: %s", in->name, cap_strerror(err));
		return EXIT_FAIL;
	}
	return 0;
}

int input__reader(struct input *in, struct cap_reader **r)
{
	if (in->stream)
		return cap_reader__open_stream(in->stream, r);
	return cap_reader__open(in->arg, r);
}

int input__model(struct input *in, const struct model_opts *o, struct model **m)
{
	if (in->stream)
		return model__load_stream(in->stream, o, m);
	return model__load_opts(in->arg, o, m);
}

void input__close(struct input *in)
{
	cap_stream__free(in->stream);
	in->stream = NULL;
}
