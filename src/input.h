/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The capture a reading command reads: a path, or "-" for standard input,
 * as perf, tar and zstd take it (a file named "-" is "./-"). Standard input
 * is read once, front to back, as a stream (format/capture.h), and refused
 * when it is a terminal.
 */
#ifndef STKREC_SRC_INPUT_H
#define STKREC_SRC_INPUT_H

#include <stdbool.h>
#include "format/capture.h"
#include "report/model.h"

struct input {
	const char *arg;           /* as given */
	const char *name;          /* for messages: arg, or "<stdin>" */
	struct cap_stream *stream; /* "-": standard input */
};

/* "-" is standard input. */
bool input__is_stdin(const char *arg);
/* What messages call arg. */
const char *input__name(const char *arg);
/* 0, or the exit code to return with the error printed (naming cmd). */
int input__open(struct input *in, const char *cmd, const char *arg);
/* The capture's reader, or its model: 0 or the reader's error (-errno,
 * CAP_ERR_*), which log_capture_error() explains. Once per input. */
int input__reader(struct input *in, struct cap_reader **r);
int input__model(struct input *in, const struct model_opts *o, struct model **m);
/* After the reader or model is done with it. */
void input__close(struct input *in);

#endif
