#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Read stkrec's exports back, for tests/test_report_export.c to compare
with `stkrec script --folded` of the same capture, one line per event:

  export_lines.py chrome FILE      a Trace Event Format file, each event as
                                   script --folded prints it
  export_lines.py speedscope FILE  a speedscope file, reduced: intervals as
                                   "PID/TID SECONDS KIND US STACK", CPU
                                   samples as "PID/TID cpu WEIGHT STACK"
  export_lines.py script FILE      script --folded output, reduced the same
                                   way (a CPU sample weighs WEIGHT=$PERIOD)
  export_lines.py stripped FILE    script --folded output without its
                                   per-event cgroup (" cgroup PATH
                                   container NAME"), which the Chrome
                                   trace gives per process, not per event

Checks what it reads on the way (exits 1, saying why): the Trace Event
Format's phases and pairs, speedscope's nesting, order and weights.
Times are exact: JSON numbers are read as decimals, not floats.
"""
import json
import os
import re
import sys
from decimal import Decimal

OPS = "RWFD?"
# script's mark of a wait not seen whole, by its CAP_OFFCPU_OPEN_* flags
OPEN_MARKS = ["", " open:start", " open:end", " open:both",
              "", " open:start?", " open:end", " open:both?"]


def fail(why):
    print(f"export_lines: {why}", file=sys.stderr)
    sys.exit(1)


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f, parse_float=Decimal)


def us_ns(v):
    """A microsecond value with three decimals as integer nanoseconds."""
    ns = Decimal(v) * 1000
    if ns != ns.to_integral_value():
        fail(f"{v} us is not a whole number of nanoseconds")
    return int(ns)


def seconds(ns):
    """script's SECONDS: seconds.microseconds, truncated, signed."""
    sign = "-" if ns < 0 else ""
    ns = abs(ns)
    return f"{sign}{ns // 1000000000}.{ns % 1000000000 // 1000:06d}"


def round_us(ns):
    """view_ns_to_us(): microseconds, half up."""
    return ns // 1000 + (ns % 1000 >= 500)


def head(comm, pid, tid, cpu, ns):
    where = f"[{cpu:03d}]" if cpu >= 0 else "[---]"
    return f"{comm:>16} {pid:7}/{tid:<7} {where} {seconds(ns)}: "


# ---- Trace Event Format -----------------------------------------------------

def chrome_names(events):
    threads, devices = {}, {}
    for e in events:
        if e["ph"] != "M":
            continue
        if e["name"] == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["name"] == "process_name" and e["pid"] >= 1 << 30:
            devices[e["pid"]] = e["args"]["name"]
    return threads, devices


def chrome_bio(b, e, devices):
    a = b["args"]
    if e.get("name") != b["name"] or e["pid"] != b["pid"]:
        fail(f"request {b['id']}: its end {e} is not on its track")
    if devices.get(b["pid"]) != f"{b['name']} ({a['dev']})":
        fail(f"request {b['id']}: device {b['pid']} is named {devices.get(b['pid'])}")
    disk = "?" if b["name"] == a["dev"] else b["name"]  # unnamed: MAJ:MIN
    lat = us_ns(e["ts"]) - us_ns(b["ts"])
    line = head(a["comm"], a["pid"], a["tid"], -1, us_ns(e["ts"]))
    line += (f"bio: {a['bytes']} bytes {a['op']} {disk} {a['dev']} sector {a['sector']}"
             f" lat {round_us(max(lat, 0))} us")
    if a["error"]:
        line += f" error {a['error']}"
    if a["stack"]:
        line += " " + ";".join(a["stack"])
    return line


def chrome(path):
    d = load(path)
    events = d["traceEvents"]
    threads, devices = chrome_names(events)
    begun = {}
    for e in events:
        ph = e["ph"]
        if ph in ("X", "i"):
            a = e["args"]
            comm = a.get("comm", threads.get((e["pid"], e["tid"])))
            if comm is None:
                fail(f"no thread_name for {e['pid']}/{e['tid']}")
            line = head(comm, e["pid"], e["tid"], a["cpu"], us_ns(e["ts"]))
            if ph == "X":
                if e["cat"] != "offcpu" or e["name"] not in a["stack"] + ["[unknown]"]:
                    fail(f"bad off-CPU event {e}")
                line += (f"offcpu: {round_us(us_ns(e['dur']))} us state {a['state']:#x}"
                         + OPEN_MARKS[a.get("open", 0) & 7])
            else:
                if e["cat"] != "cpu" or e.get("s") != "t":
                    fail(f"bad CPU sample {e}")
                line += "cpu:"
            print(line + " " + ";".join(a["stack"]))
        elif ph == "b":
            if e["id"] in begun:
                fail(f"request {e['id']} begins twice")
            begun[e["id"]] = e
        elif ph == "e":
            b = begun.pop(e["id"], None)
            if b is None:
                fail(f"request {e['id']} ends before it begins")
            print(chrome_bio(b, e, devices))
        elif ph != "M":
            fail(f"unexpected phase {ph}")
    if begun:
        fail(f"{len(begun)} requests never end")


# ---- speedscope ---------------------------------------------------------------

def task(profile):
    """"COMM PID/TID: WHAT[ #N]" -> "PID/TID", WHAT"""
    name = profile["name"]
    who, what = name.rsplit(": ", 1)
    return who.rsplit(" ", 1)[1], what.split(" #")[0]


def intervals(p, frames):
    """The intervals of an evented profile: (open, close, stack)."""
    stack, deepest, start, last, out = [], [], None, None, []
    for e in p["events"]:
        at = e["at"]
        if last is not None and at < last:
            fail(f"{p['name']}: time goes back at {at}")
        last = at
        if not p["startValue"] <= at <= p["endValue"]:
            fail(f"{p['name']}: {at} outside the profile")
        if e["type"] == "O":
            if not stack:
                start, deepest = at, []
            stack.append(e["frame"])
            if len(stack) > len(deepest):
                deepest = list(stack)
        elif not stack or stack.pop() != e["frame"]:
            fail(f"{p['name']}: frame {e['frame']} closes out of order at {at}")
        elif not stack:
            out.append((start, at, [frames[i]["name"] for i in deepest]))
    if stack:
        fail(f"{p['name']}: frames left open")
    return out


def speedscope(path):
    d = load(path)
    frames = d["shared"]["frames"]
    for p in d["profiles"]:
        who, what = task(p)
        if p["type"] == "sampled":
            if len(p["samples"]) != len(p["weights"]) or sum(p["weights"]) != p["endValue"]:
                fail(f"{p['name']}: samples and weights disagree")
            for s, w in zip(p["samples"], p["weights"]):
                print(f"{who} cpu {w} " + ";".join(frames[i]["name"] for i in s))
            continue
        for start, end, names in intervals(p, frames):
            if what == "off-CPU":
                print(f"{who} {seconds(start)} offcpu {round_us(end - start)} "
                      + ";".join(names))
            else:
                print(f"{who} {seconds(end)} bio {round_us(end - start)} " + ";".join(names))


SCRIPT = re.compile(r"^ *(.*?) +(\d+)/(\d+)(?: +ns \d+/\d+)? +\[([-\d]+)\] (-?\d+\.\d{6}): (offcpu|cpu|bio):(.*)$")
# what script says of a known cgroup, before the stack (format 1.5)
CGROUP = re.compile(r" cgroup \S+(?: container \S+)?(?= |$)")
OFFCPU = re.compile(r"^ (\d+) us state 0x[0-9a-f]+(?: open:\w+\??)? (.*)$")
BIO = re.compile(r"^ \d+ bytes \S (\S+) (\d+:\d+) sector \d+ lat (\d+) us(?: error -?\d+)?(?: (.*))?$")


def script(path):
    """script --folded lines, reduced as speedscope() prints its intervals
    (an empty stack is the "[unknown]" frame of the exports)."""
    weight = os.environ.get("PERIOD", "1")
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SCRIPT.match(line.rstrip("\n"))
            if not m:
                fail(f"not a script --folded line: {line!r}")
            who, secs, kind, rest = f"{m[2]}/{m[3]}", m[5], m[6], CGROUP.sub("", m[7], 1)
            if kind == "cpu":
                print(f"{who} cpu {weight} {rest[1:] or '[unknown]'}")
            elif kind == "offcpu":
                o = OFFCPU.match(rest)
                print(f"{who} {secs} offcpu {o[1]} {o[2] or '[unknown]'}")
            else:
                b = BIO.match(rest)
                disk = b[2] if b[1] == "?" else b[1]
                stack = b[4] + ";" if b[4] else ""
                print(f"{who} {secs} bio {b[3]} {stack}{disk}")


def stripped(path):
    """script --folded lines as they are, less their cgroup."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SCRIPT.match(line.rstrip("\n"))
            if not m:
                fail(f"not a script --folded line: {line!r}")
            print(line.rstrip("\n")[:m.start(7)] + CGROUP.sub("", m[7], 1))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in ("chrome", "speedscope", "script", "stripped"):
        fail("usage: export_lines.py chrome|speedscope|script FILE")
    globals()[sys.argv[1]](sys.argv[2])


main()
