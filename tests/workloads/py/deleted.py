# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cpu2deep's shape for a script the test deletes once it runs: main -> job
-> crunch, crunch burning CPU. Self-contained (it imports no wlcommon), so
that a copy of this one file runs anywhere. argv[1]: seconds (default 5).
Prints once, then runs and exits 0 (def lines; crunch's body lies between
crunch_line and job_line, job's between job_line and main_line):
ready pid=N tid=N crunch_line=N job_line=N main_line=N"""
import os
import sys
import time


def crunch(deadline):
    s = 1.0
    while time.monotonic() < deadline:
        for i in range(1, 2000):
            s = s * 0.5 + i / (s + 1.0)
    return s


def job(deadline):
    return crunch(deadline) * 2


def main():
    end = time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)
    print("ready pid=%d tid=%d crunch_line=%d job_line=%d main_line=%d" %
          (os.getpid(), os.getpid(), crunch.__code__.co_firstlineno,
           job.__code__.co_firstlineno, main.__code__.co_firstlineno), flush=True)
    job(end)
    return 0


if __name__ == "__main__":
    sys.exit(main())
