#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Where a hung qemu guest's vCPUs are: three samples, a second apart, of
each vCPU's RIP and RFLAGS.IF through qemu's human monitor, named from the
guest's kallsyms, then an NMI (the guest panics with every CPU's
backtrace when booted with unknown_nmi_panic=1 panic_print=0x40).

usage: hang_dump.py MONITOR_SOCKET KALLSYMS
Prints one line per vCPU and sample: "cpu N rip ADDR SYMBOL+OFF if=0|1".
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


def main():
    sock_path, map_path = sys.argv[1], sys.argv[2]
    syms = load_map(map_path)
    addrs = [a for a, _ in syms]
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sock_path)
    command(s, '')  # the banner
    for sample in range(3):
        out = command(s, 'info registers -a')
        cpu = -1
        for line in out.splitlines():
            m = re.match(r'\s*CPU#(\d+)', line)
            if m:
                cpu = int(m.group(1))
            m = re.search(r'RIP=([0-9a-f]+) RFL=([0-9a-f]+)', line)
            if m:
                rip, rfl = int(m.group(1), 16), int(m.group(2), 16)
                print('sample %d cpu %d rip %x %s if=%d' %
                      (sample, cpu, rip, name(syms, addrs, rip), (rfl >> 9) & 1))
        time.sleep(1)
    command(s, 'nmi')
    print('nmi sent')


if __name__ == '__main__':
    main()
