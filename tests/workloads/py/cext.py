# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python called back from C: sort_it() sorts with libc's qsort() through
ctypes, in a loop, with cmp_cb(), a Python comparator that burns a little
CPU, so that native frames (qsort, libffi, _ctypes) stand between Python
frames: main -> sort_it -> [qsort ... ffi] -> cmp_cb. argv[1]: seconds
(default 5). Prints once, then runs and exits 0:
ready pid=N tid=N main_line=N main_last=N sort_it_line=N sort_it_last=N
cmp_cb_line=N cmp_cb_last=N"""
import ctypes
import sys
import time

import wlcommon

libc = ctypes.CDLL(None)
CMP = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
libc.qsort.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, CMP]
libc.qsort.restype = None


def cmp_cb(a, b):
    x, y = a[0], b[0]
    h = x
    for i in range(40):
        h = (h * 33 + y + i) & 0xffffff
    return (x > y) - (x < y)


def sort_it(end, cmp):
    arr = (ctypes.c_int * 256)()
    n = 0
    while time.monotonic() < end:
        for i in range(len(arr)):
            arr[i] = (i * 7919 + n) % 1009
        libc.qsort(arr, len(arr), ctypes.sizeof(ctypes.c_int), cmp)
        n += 1
    return n


def main():
    end = wlcommon.deadline()
    cmp = CMP(cmp_cb)
    wlcommon.ready(wlcommon.lines(main, sort_it, cmp_cb))
    sort_it(end, cmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
