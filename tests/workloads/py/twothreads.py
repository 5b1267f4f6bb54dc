# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Two threads burning CPU in different chains: alpha -> alpha_leaf and
beta -> beta_leaf (the main thread waits in join()). argv[1]: seconds
(default 5). Prints once both burn, then runs and exits 0:
ready pid=N tid=N alpha_tid=N beta_tid=N alpha_line=N alpha_last=N
alpha_leaf_line=N ... beta_leaf_last=N"""
import sys
import time

import wlcommon


def alpha_leaf(me, end):
    me.started()
    x = 0
    while time.monotonic() < end:
        for i in range(2000):
            x ^= (x << 1) + i & 0xffff
    return x


def alpha(me, end):
    return alpha_leaf(me, end)


def beta_leaf(me, end):
    me.started()
    words = []
    while time.monotonic() < end:
        for i in range(500):
            words.append("%x" % (i * 2654435761 % 4096))
        del words[:]
    return len(words)


def beta(me, end):
    return beta_leaf(me, end)


def main():
    end = wlcommon.deadline()
    workers = [wlcommon.Worker(f.__name__, f, end) for f in (alpha, beta)]
    for w in workers:
        w.start()
    tids = [w.wait_started() for w in workers]
    wlcommon.ready(*tids + [wlcommon.lines(alpha, alpha_leaf, beta, beta_leaf)])
    for w in workers:
        w.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
