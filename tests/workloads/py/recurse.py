# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Recursion 200 deep (past a 64-frame limit): main -> dive x 200 -> bottom,
bottom burning CPU. argv[1]: seconds (default 5). Prints once, then runs and
exits 0:
ready pid=N tid=N depth=200 main_line=N main_last=N dive_line=N dive_last=N
bottom_line=N bottom_last=N"""
import sys
import time

import wlcommon

DEPTH = 200


def bottom(end):
    t = (1, 2, 3)
    while time.monotonic() < end:
        for i in range(1000):
            t = (t[1], t[2], (t[0] + t[1] + i) % 9973)
    return t[0]


def dive(n, end):
    if n > 1:
        return dive(n - 1, end) + 1
    return bottom(end)


def main():
    end = wlcommon.deadline()
    wlcommon.ready("depth=%d" % DEPTH, wlcommon.lines(main, dive, bottom))
    dive(DEPTH, end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
