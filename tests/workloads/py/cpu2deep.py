# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A CPU loop two calls deep: main -> serve -> handle, handle burning CPU in
pure Python. argv[1]: seconds of its CPU time (default 5). Prints once, then runs and exits 0:
ready pid=N tid=N main_line=N main_last=N serve_line=N serve_last=N
handle_line=N handle_last=N"""
import sys
import time

import wlcommon


def handle(deadline):
    x = 0
    while time.thread_time() < deadline:
        for i in range(2000):
            x = (x * 31 + i) % 1000003
    return x


def serve(deadline):
    return handle(deadline) + 1


def main():
    end = wlcommon.cpu_deadline()
    wlcommon.ready(wlcommon.lines(main, serve, handle))
    serve(end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
