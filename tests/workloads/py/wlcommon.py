# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""What the Python workloads share: how long to run (argv[1] seconds,
default 5), the kernel's thread ids, the lines a function spans and the one
`ready pid=N tid=N ...` line each prints once its threads are in their
steady state. Imported from the script's own directory (sys.path[0])."""
import dis
import os
import sys
import threading
import time


def deadline():
    """When to stop: argv[1] seconds from now (default 5)."""
    return time.monotonic() + (float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)


def cpu_deadline():
    """When a CPU burner stops: argv[1] seconds of its own thread's CPU time
    from now (default 5), so that a busy host does not thin its samples."""
    return time.thread_time() + (float(sys.argv[1]) if len(sys.argv) > 1 else 5.0)


def tid():
    """The calling thread's kernel id (gettid(2) before 3.8's native ids)."""
    if hasattr(threading, "get_native_id"):
        return threading.get_native_id()
    import ctypes
    nr = {"x86_64": 186, "aarch64": 178}[os.uname().machine]
    return ctypes.CDLL(None).syscall(nr)


def lines(*funcs):
    """NAME_line=DEF NAME_last=LAST: the lines each function spans."""
    out = []
    for f in funcs:
        last = max(l for _, l in dis.findlinestarts(f.__code__) if l)
        out.append("%s_line=%d %s_last=%d" % (f.__name__, f.__code__.co_firstlineno,
                                              f.__name__, last))
    return " ".join(out)


def ready(*fields):
    """The ready line: this process, the calling thread, then fields."""
    print(" ".join(("ready pid=%d tid=%d" % (os.getpid(), tid()),) + fields), flush=True)


class Worker(threading.Thread):
    """A thread named name that runs fn(self, *args) and whose kernel id is
    known once it has called self.started() (from its steady state on)."""

    def __init__(self, name, fn, *args):
        threading.Thread.__init__(self, name=name, target=fn, args=(self,) + args,
                                  daemon=True)
        self.tid = 0
        self._up = threading.Event()

    def started(self):
        self.tid = tid()
        self._up.set()

    def wait_started(self, timeout=30):
        if not self._up.wait(timeout):
            raise SystemExit("%s did not start" % self.name)
        return "%s_tid=%d" % (self.name, self.tid)
