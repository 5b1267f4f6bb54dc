#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Where a silent qemu guest's vCPUs are, and whether it is stuck.

usage: hang_dump.py MONITOR_SOCKET KALLSYMS check
    Five samples, a second apart, of each vCPU's RIP and RFLAGS.IF
    through qemu's human monitor, named from the guest's kallsyms: one
    line per vCPU and sample, "sample S cpu N rip ADDR SYMBOL+OFF if=0|1",
    then "verdict: stuck" (exit 0) when every vCPU stayed in kernel code
    within 4 KiB (a loop it does not leave) or with interrupts off in
    every sample, else "verdict: moving" (exit 1: a guest slowed down by a
    busy host, not a frozen one).
usage: hang_dump.py MONITOR_SOCKET KALLSYMS nmi
    An NMI: the guest panics with every CPU's backtrace when booted with
    unknown_nmi_panic=1 panic_print=0x40.
"""
import bisect
import re
import socket
import sys
import time


def load_map(path):
    syms = []
    try:
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 3 and parts[1] in 'tTwW':
                    syms.append((int(parts[0], 16), parts[2]))
    except OSError:
        pass
    syms.sort()
    return syms


def name(syms, addrs, a):
    i = bisect.bisect_right(addrs, a) - 1
    if i < 0:
        return '?'
    return '%s+0x%x' % (syms[i][1], a - syms[i][0])


def command(sock, cmd):
    sock.sendall((cmd + '\n').encode())
    out = b''
    sock.settimeout(5)
    try:
        while not out.rstrip().endswith(b'(qemu)'):
            chunk = sock.recv(65536)
            if not chunk:
                break
            out += chunk
    except socket.timeout:
        pass
    return out.decode(errors='replace')


def samples(s, syms, addrs):
    seen = {}
    for sample in range(5):
        out = command(s, 'info registers -a')
        cpu = -1
        for line in out.splitlines():
            m = re.match(r'\s*CPU#(\d+)', line)
            if m:
                cpu = int(m.group(1))
            m = re.search(r'RIP=([0-9a-f]+) RFL=([0-9a-f]+)', line)
            if m:
                rip, rfl = int(m.group(1), 16), int(m.group(2), 16)
                seen.setdefault(cpu, []).append((rip, (rfl >> 9) & 1))
                print('sample %d cpu %d rip %x %s if=%d' %
                      (sample, cpu, rip, name(syms, addrs, rip), (rfl >> 9) & 1))
        time.sleep(1)
    return seen


def stuck(seen):
    """Every vCPU in kernel code in every sample, each either in one loop
    (4 KiB) or with interrupts off throughout: a healthy guest, however
    slow, is seen in user mode, idle or with interrupts on. Seen frozen:
    both vCPUs cycling through __schedule, asm_exc_int3 and
    irqentry_nmi_exit with IF=0 (an rt guest, 2026-11-27)."""
    kernel = 0xffff800000000000
    return bool(seen) and all(
        min(r for r, _ in v) >= kernel and
        (max(r for r, _ in v) - min(r for r, _ in v) < 4096 or not any(f for _, f in v))
        for v in seen.values())


def main():
    sock_path, map_path, what = sys.argv[1], sys.argv[2], sys.argv[3]
    syms = load_map(map_path)
    addrs = [a for a, _ in syms]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    command(s, '')  # the banner
    if what == 'nmi':
        command(s, 'nmi')
        print('nmi sent')
        return 0
    if stuck(samples(s, syms, addrs)):
        print('verdict: stuck')
        return 0
    print('verdict: moving')
    return 1


if __name__ == '__main__':
    sys.exit(main())
