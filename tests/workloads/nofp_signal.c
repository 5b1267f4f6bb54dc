// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A signal handler that burns CPU, built without frame pointers, while
 * main waits in pause(): samples in sig_burn unwind through the signal
 * frame (__restore_rt) into the code the signal interrupted
 * (main;looper;pause), which the unwinder must cross with the registers the
 * kernel saved, not by a return address.
 *
 * usage: nofp_signal [MS]   (default 2000)
 */
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>
#include "nofp_common.h"

static volatile double sink;
static volatile sig_atomic_t stop;

/* ~4 ms of work per signal: most samples land in the handler */
NOFP_FN void sig_burn(void)
{
	long long end = nofp_now_ns() + 4000000;
	double x = 1.0;

	while (nofp_now_ns() < end)
		for (int i = 0; i < 1000; i++)
			x = x * 1.0000001 + 0.5;
	sink = x;
}

NOFP_FN void on_alarm(int sig)
{
	(void)sig;
	sig_burn();
	sink += 1;
}

/* Waits for signals: the CPU time is the handler's */
NOFP_FN void looper(long ms)
{
	long long end = nofp_now_ns() + ms * 1000000ll;

	while (nofp_now_ns() < end)
		pause();
}

int main(int argc, char **argv)
{
	struct itimerval it = { { 0, 5000 }, { 0, 5000 } };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	if (sigaction(SIGALRM, &sa, NULL) || setitimer(ITIMER_REAL, &it, NULL))
		return 1;
	looper(nofp_ms(argc, argv, 1, 2000));
	return stop;
}
