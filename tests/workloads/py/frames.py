# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# Two threads with known Python stacks, for tests/test_python_walk.c: the
# main thread in outer() -> inner(), asleep in time.sleep; a second thread
# in worker() -> wait_lock(), blocked on a threading.Lock. "ready" (with
# each thread's threading.get_ident() and get_native_id()) once both are
# there. Runs on CPython 3.8 and later.
import sys
import threading
import time

lock = threading.Lock()
lock.acquire()
worker_ids = []


def wait_lock():
    lock.acquire()


def worker():
    worker_ids.append((threading.get_ident(), threading.get_native_id()))
    wait_lock()


def inner():
    me = (threading.get_ident(), threading.get_native_id())
    print("ready main=%d:%d worker=%d:%d" % (me + worker_ids[0]), flush=True)
    time.sleep(600)


def outer():
    inner()


def worker_waits(t):
    frame = sys._current_frames().get(t.ident)
    return frame is not None and frame.f_code.co_name == "wait_lock"


t = threading.Thread(target=worker, daemon=True)
t.start()
while not worker_waits(t):
    time.sleep(0.001)
outer()
