# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A CPU loop in two named functions, hot_a and hot_b, called in turn by
main, for comparing 3.12+'s `-X perf` trampoline (perf=1 when it is
active) with stkrec's frames. argv[1]: seconds of its CPU time (default 5). Prints once,
then runs and exits 0:
ready pid=N tid=N perf=0|1 main_line=N main_last=N hot_a_line=N hot_a_last=N
hot_b_line=N hot_b_last=N"""
import sys
import time

import wlcommon


def hot_a(n):
    x = 0
    for i in range(n):
        x = (x + i * i) % 65521
    return x


def hot_b(n):
    s = ""
    for i in range(n // 8):
        s = str(len(s) + i)
    return len(s)


def main():
    end = wlcommon.cpu_deadline()
    perf = getattr(sys, "is_stack_trampoline_active", lambda: False)()
    wlcommon.ready("perf=%d" % perf, wlcommon.lines(main, hot_a, hot_b))
    while time.thread_time() < end:
        hot_a(20000)
        hot_b(20000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
