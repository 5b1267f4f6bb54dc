# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The Python part of `make demo` (tests/workloads/demo.c starts it):
poll_queue(), a Python function that waits 0.2 s at a time, until
argv[1] (a time.monotonic(): the C part's deadline). Its waits are named by the Python function, not the interpreter's
C frames (stkrec names Python frames of python3.8 to 3.13)."""
import sys
import time


def poll_queue(until):
    while time.monotonic() < until:
        time.sleep(0.2)


if __name__ == "__main__":
    poll_queue(float(sys.argv[1]))
