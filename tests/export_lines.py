#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Read stkrec's exports back, for tests/test_report_export.c to compare
with `stkrec script --folded` of the same capture, one line per event:

  export_lines.py chrome FILE      a Trace Event Format file, each event as
                                   script --folded prints it
  export_lines.py speedscope FILE  a speedscope file, reduced: waits as
                                   "PID/TID #N offcpu US STACK" (the N-th
                                   of its thread), requests as "PID/TID bio
                                   US STACK", CPU samples as "PID/TID cpu
                                   WEIGHT STACK"
  export_lines.py script FILE      script --folded output, reduced the same
                                   way (a CPU sample weighs WEIGHT=$PERIOD)
  export_lines.py flows FILE       a Trace Event Format file's wakeup
                                   flows, checked: "N flows of M wakeups"
  export_lines.py chain FILE TID   report --chain TID read from a Trace
                                   Event Format file: its flows and each
                                   wakeup's args.waited, hop by hop
  export_lines.py chainref FILE    report --chain output reduced the same
                                   way (hops, "woken at T by WHO")
  export_lines.py stripped FILE    script --folded output without its
                                   per-event cgroup (" cgroup PATH
                                   container NAME"), which the Chrome
                                   trace gives per process, not per event

Checks what it reads on the way (exits 1, saying why): the Trace Event
Format's phases and pairs, speedscope's weights and their sum.
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


IRQ_PID = (1 << 30) - 1  # the interrupts' pseudo process


def waker_of(e, threads):
    """The comm, pid and tid of a wakeup's slice's waker, as script names it."""
    if e["pid"] == IRQ_PID:
        return threads[(e["pid"], e["tid"])].split(" CPU ")[0], 0, 0
    return e["args"].get("comm", threads.get((e["pid"], e["tid"]))), e["pid"], e["tid"]


def chrome_waker(e, threads):
    """The script head of a wakeup's slice."""
    comm, pid, tid = waker_of(e, threads)
    return head(comm, pid, tid, e["args"]["cpu"], us_ns(e["ts"]))


def chrome_slice(e, threads):
    """An "X" or "i" event as script --folded prints it."""
    a = e["args"]
    if e["ph"] == "X" and e["cat"] == "wakeup":
        if e["name"] != "wakes " + a["woke"].rsplit(" ", 1)[0] or e["dur"] != 0:
            fail(f"bad wakeup {e}")
        io = f" [io {a['io']}]" if "io" in a else ""
        return chrome_waker(e, threads) + f"wakeup: woke {a['woke']}{io} " + ";".join(a["stack"])
    comm = a.get("comm", threads.get((e["pid"], e["tid"])))
    if comm is None:
        fail(f"no thread_name for {e['pid']}/{e['tid']}")
    line = head(comm, e["pid"], e["tid"], a["cpu"], us_ns(e["ts"]))
    if e["ph"] == "X":
        if e["cat"] != "offcpu" or e["name"] not in a["stack"] + ["[unknown]"]:
            fail(f"bad off-CPU event {e}")
        line += (f"offcpu: {round_us(us_ns(e['dur']))} us state {a['state']:#x}"
                 + OPEN_MARKS[a.get("open", 0) & 7])
    else:
        if e["cat"] != "cpu" or e.get("s") != "t":
            fail(f"bad CPU sample {e}")
        line += "cpu:"
    return line + " " + ";".join(a["stack"])


def chrome(path):
    d = load(path)
    events = d["traceEvents"]
    threads, devices = chrome_names(events)
    begun = {}
    for e in events:
        ph = e["ph"]
        if ph in ("X", "i"):
            print(chrome_slice(e, threads))
        elif ph == "b":
            if e["id"] in begun:
                fail(f"request {e['id']} begins twice")
            begun[e["id"]] = e
        elif ph == "e":
            b = begun.pop(e["id"], None)
            if b is None:
                fail(f"request {e['id']} ends before it begins")
            print(chrome_bio(b, e, devices))
        elif ph not in ("M", "s", "f"):
            fail(f"unexpected phase {ph}")
    if begun:
        fail(f"{len(begun)} requests never end")
    flows(events)


def chrome_flows(path):
    """The flows, checked as chrome() checks them: their count, the
    wakeups', then "WAKER -> WOKEN: N" per pair of thread names."""
    events = load(path)["traceEvents"]
    threads, _ = chrome_names(events)
    ends, marks = flows(events)
    pairs = {}
    for p in ends.values():
        key = f"{waker_of(p['s'], threads)[0]} -> {threads[(p['f']['pid'], p['f']['tid'])]}"
        pairs[key] = pairs.get(key, 0) + 1
    print(f"{len(ends)} flows of {len(marks)} wakeups")
    for key in sorted(pairs):
        print(f"{key}: {pairs[key]}")


# ---- wakeup flows -------------------------------------------------------------

def bound_slice(tracks, e, order):
    """The slice a flow event binds to as Perfetto binds it: the last slice
    begun on its track at or before it (events sorted by time, ties in file
    order), which must also enclose it (chrome://tracing's rule)."""
    key, at = (e["pid"], e["tid"]), (us_ns(e["ts"]), order)
    best = None
    for s_at, s in tracks.get(key, []):
        if s_at <= at:
            best = s
    if best is None:
        fail(f"flow {e['id']}: no slice on {key} to bind to at {e['ts']}")
    start = us_ns(best["ts"])
    if not start <= us_ns(e["ts"]) <= start + us_ns(best.get("dur", 0)):
        fail(f"flow {e['id']}: {best} does not enclose it")
    return best


def woken_tid(mark):
    return int(mark["args"]["woke"].rsplit("/", 1)[1])


def last_marks(tracks, marks):
    """The join of the model: each wait of the trace and the last wakeup of
    its thread inside it, by the ids of their events."""
    by_tid = {}
    for m in marks:
        by_tid.setdefault(woken_tid(m), []).append(m)
    want = {}
    for slices in tracks.values():
        for _, s in slices:
            if s["ph"] != "X" or s["cat"] != "offcpu":
                continue
            start = us_ns(s["ts"])
            inside = [m for m in by_tid.get(s["tid"], [])
                      if start <= us_ns(m["ts"]) <= start + us_ns(s["dur"])]
            if inside:
                want[id(max(inside, key=lambda m: us_ns(m["ts"])))] = s
    return want


def bind_flows(events):
    """The slices of the trace by track, its wakeups' slices, and each
    flow's {"s": slice, "f": slice} by id, bound as Perfetto binds them."""
    tracks, marks, ends = {}, [], {}
    for i, e in enumerate(events):
        if e["ph"] in ("X", "i"):
            tracks.setdefault((e["pid"], e["tid"]), []).append(((us_ns(e["ts"]), i), e))
            if e["cat"] == "wakeup":
                marks.append(e)
    for slices in tracks.values():
        slices.sort(key=lambda x: x[0])
    for i, e in enumerate(events):
        if e["ph"] not in ("s", "f"):
            continue
        if e["cat"] != "wakeup" or e["name"] != "wakeup" or (e["ph"] == "f") != (e.get("bp") == "e"):
            fail(f"bad flow event {e}")
        pair = ends.setdefault(e["id"], {})
        if e["ph"] in pair:
            fail(f"flow {e['id']}: two '{e['ph']}'")
        pair[e["ph"]] = bound_slice(tracks, e, i)
        pair[e["ph"] + "ts"] = us_ns(e["ts"])
    return tracks, marks, ends


def flows(events):
    """Every wakeup that ended a wait of the trace has exactly one flow,
    from its slice to the end of that wait, and no other flow exists."""
    tracks, marks, ends = bind_flows(events)
    want = last_marks(tracks, marks)
    for fid, pair in ends.items():
        mark, wait = pair.get("s"), pair.get("f")
        if mark is None or wait is None:
            fail(f"flow {fid}: no start or no end")
        if mark["cat"] != "wakeup" or wait["cat"] != "offcpu":
            fail(f"flow {fid}: from {mark['name']} to {wait['name']}")
        if (pair["sts"] != us_ns(mark["ts"])
                or pair["fts"] != us_ns(wait["ts"]) + us_ns(wait["dur"])):
            fail(f"flow {fid}: not from the wakeup's time to the end of the wait")
        if want.pop(id(mark), None) is not wait:
            fail(f"flow {fid}: wakeup at {mark['ts']} did not end the wait at {wait['ts']}")
    if want:
        fail(f"{len(want)} wakeups ended a wait of the trace without a flow")
    return ends, marks


def chain_hop(hop, e, threads):
    """--chain's line of a wait."""
    comm = e["args"].get("comm", threads.get((e["pid"], e["tid"])))
    start, dur = us_ns(e["ts"]), us_ns(e["dur"])
    print(f"{hop:2d}  {comm} {e['pid']}/{e['tid']} waited {dur // 1000000}.{dur // 1000 % 1000:03d}"
          f" ms, {seconds(start)} to {seconds(start + dur)}")


def chain(path, who, hops=5):
    """--chain WHO read from the trace: from the longest wait of thread
    WHO, each hop's wait, its waker (the flow's start), and the waker's
    wait before (args.waited), as --chain prints them (chainref)."""
    events = load(path)["traceEvents"]
    threads, _ = chrome_names(events)
    tracks, _, ends = bind_flows(events)
    waker = {id(p["f"]): p["s"] for p in ends.values()}
    waits = [e for e in events if e["ph"] == "X" and e["cat"] == "offcpu"]
    mine = [e for e in waits if e["tid"] == who] or [e for e in waits if e["pid"] == who]
    e = max(mine, key=lambda e: us_ns(e["dur"]))  # the first of the longest
    for hop in range(hops):
        chain_hop(hop, e, threads)
        mark = waker.get(id(e))
        if mark is None:
            print("      no waker")
            return
        comm, pid, tid = waker_of(mark, threads)
        print(f"      woken at {seconds(us_ns(mark['ts']))} by {comm}"
              + (f" {pid}/{tid}" if tid else ""))
        if mark["pid"] == IRQ_PID or hop + 1 >= hops:
            return
        w = mark["args"].get("waited")
        if w is None:
            print(f"      {mark['tid']} had not waited before (running)")
            return
        e = next(s for _, s in tracks[(mark["pid"], mark["tid"])]
                 if s["cat"] == "offcpu" and s["ts"] == w["ts"] and s["dur"] == w["dur"])


def chainref(path):
    """--chain's output, reduced to what chain() prints."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if re.match(r"^[ \d]\d  ", line):
                print(re.sub(r" \(began before the recording\)| \(still waiting at the end\)",
                             "", line))
            elif line.startswith("      woken at "):
                print(line.split(":", 1)[0])
            elif line.startswith("      no waker"):
                print("      no waker")
            elif line.endswith(" had not waited before (running)"):
                print(line)


# ---- speedscope ---------------------------------------------------------------

def task(profile):
    """"COMM PID/TID: WHAT[ #N]" -> "PID/TID", WHAT"""
    name = profile["name"]
    who, what = name.rsplit(": ", 1)
    return who.rsplit(" ", 1)[1], what.split(" #")[0]


def speedscope(path):
    d = load(path)
    frames = d["shared"]["frames"]
    for p in d["profiles"]:
        who, what = task(p)
        samples, weights = p["samples"], p["weights"]
        if p["type"] != "sampled" or p["startValue"] != 0:
            fail(f"{p['name']}: not a sampled profile from 0")
        if len(samples) != len(weights) or sum(weights) != p["endValue"]:
            fail(f"{p['name']}: samples and weights disagree")
        for n, (s, w) in enumerate(zip(samples, weights)):
            stack = ";".join(frames[i]["name"] for i in s)
            if what == "CPU":
                print(f"{who} cpu {w} {stack}")
            elif what == "off-CPU":
                print(f"{who} #{n} offcpu {round_us(w)} {stack}")
            else:
                print(f"{who} bio {round_us(w)} {stack}")


SCRIPT = re.compile(r"^ *(.*?) +(\d+)/(\d+)(?: +ns \d+/\d+)? +\[([-\d]+)\] (-?\d+\.\d{6}): (offcpu|cpu|bio|wakeup):(.*)$")
# what script says of a known cgroup, before the stack (format 1.5)
CGROUP = re.compile(r" cgroup \S+(?: container \S+)?(?= |$)")
OFFCPU = re.compile(r"^ (\d+) us state 0x[0-9a-f]+(?: open:\w+\??)? (.*)$")
BIO = re.compile(r"^ \d+ bytes \S (\S+) (\d+:\d+) sector \d+ lat (\d+) us(?: error -?\d+)?(?: (.*))?$")


def script(path):
    """script --folded lines, reduced as speedscope() prints its events
    (an empty stack is the "[unknown]" frame of the exports)."""
    weight = os.environ.get("PERIOD", "1")
    waits = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SCRIPT.match(line.rstrip("\n"))
            if not m:
                fail(f"not a script --folded line: {line!r}")
            who, kind, rest = f"{m[2]}/{m[3]}", m[6], CGROUP.sub("", m[7], 1)
            if kind == "wakeup":
                continue  # a wakeup is no profile's
            if kind == "cpu":
                print(f"{who} cpu {weight} {rest[1:] or '[unknown]'}")
            elif kind == "offcpu":
                o = OFFCPU.match(rest)
                n = waits[who] = waits.get(who, -1) + 1
                print(f"{who} #{n} offcpu {o[1]} {o[2] or '[unknown]'}")
            else:
                b = BIO.match(rest)
                disk = b[2] if b[1] == "?" else b[1]
                stack = b[4] + ";" if b[4] else ""
                print(f"{who} bio {b[3]} {stack}{disk}")


def stripped(path):
    """script --folded lines as they are, less their cgroup."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = SCRIPT.match(line.rstrip("\n"))
            if not m:
                fail(f"not a script --folded line: {line!r}")
            print(line.rstrip("\n")[:m.start(7)] + CGROUP.sub("", m[7], 1))


def main():
    modes = {"chrome": chrome, "flows": chrome_flows, "speedscope": speedscope,
             "script": script, "stripped": stripped, "chainref": chainref}
    if len(sys.argv) == 4 and sys.argv[1] == "chain":
        chain(sys.argv[2], int(sys.argv[3]))
    elif len(sys.argv) != 3 or sys.argv[1] not in modes:
        fail("usage: export_lines.py chrome|flows|speedscope|script|stripped|chainref FILE"
             " | chain FILE TID")
    else:
        modes[sys.argv[1]](sys.argv[2])


main()
