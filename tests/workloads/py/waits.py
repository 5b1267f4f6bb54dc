# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Three threads, each blocked one way in a function of its own name:
napper() in time.sleep(0.05), locker() in a threading.Lock's acquire() that
feeder() (the main thread) releases every 50 ms, reader() in a socket's
recv() that feeder() writes to every 50 ms. argv[1]: seconds (default 5).
Prints once all three wait, then runs and exits 0:
ready pid=N tid=N napper_tid=N locker_tid=N reader_tid=N napper_line=N
napper_last=N locker_line=N ... reader_last=N feeder_line=N feeder_last=N
(tid is feeder's)."""
import socket
import sys
import threading
import time

import wlcommon

stop = threading.Event()
lock = threading.Lock()
rsock, wsock = socket.socketpair()


def napper(me):
    me.started()
    while not stop.is_set():
        time.sleep(0.05)


def locker(me):
    lock.acquire()
    me.started()
    while not stop.is_set():
        lock.acquire()


def reader(me):
    me.started()
    while not stop.is_set():
        rsock.recv(64)


def feeder(end):
    while time.monotonic() < end:
        time.sleep(0.05)
        if lock.locked():
            lock.release()
        wsock.send(b"x")


def main():
    end = wlcommon.deadline()
    workers = [wlcommon.Worker(f.__name__, f) for f in (napper, locker, reader)]
    for w in workers:
        w.start()
    tids = [w.wait_started() for w in workers]
    wlcommon.ready(*tids + [wlcommon.lines(napper, locker, reader, feeder)])
    feeder(end)
    stop.set()
    if lock.locked():
        lock.release()
    wsock.send(b"x")
    for w in workers:
        w.join(2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
