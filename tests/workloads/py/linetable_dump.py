# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The line tables of this interpreter and the lines it gives, for
tests/test_sym_pyline.c: it compiles a set of tricky sources and prints, for
every code object (co_consts walked), its raw table and the line CPython
gives each instruction, then the line that real tracebacks and live frames
show with their offsets. Runs on CPython 3.8 to 3.13; exits 1 when the
interpreter's own ways of telling a line disagree.

Output, one record a line:
  version MAJOR MINOR
  code ID FIRSTLINENO CODE_BYTES TABLE_HEX NAME
  lines ID L0 L1 ...      the line of each 2-byte code unit, "-" for none
  frame ID OFFSET LINE    a traceback's or a live frame's (offset -1: not
                          started), LINE as traceback prints it
"""
import ctypes
import dis
import sys
import traceback

V = sys.version_info[:2]
addr2line = ctypes.pythonapi.PyCode_Addr2Line
addr2line.argtypes = [ctypes.py_object, ctypes.c_int]
addr2line.restype = ctypes.c_int

BASIC = '''
import os

def deco(f):
    return f

@deco
def decorated(a,
              b=2,
              *args, **kw):
    """doc"""
    x = [i * 2
         for i in range(a)
         if i % 3]
    y = {k: v for k, v in
         zip(x, x)}
    z = {q for q in x}
    g = (w + 1
         for w in x)
    f = lambda p: (p +
                   1)
    return sum(g) + f(len(y)) + len(z)

def handler(n):
    try:
        r = 10 / n
    except ZeroDivisionError as e:
        r = str(e)
    except (TypeError,
            ValueError):
        r = None
    else:
        r = r * 2
    finally:
        n = 0
    with open(os.devnull) as fh, \\
            open(os.devnull) as fh2:
        fh.read()
    return r

def gen(n):
    yield 1
    for i in range(n):
        if i % 2:
            continue
        yield i
    yield from range(
        3)
    return n

async def coro(x):
    await x
    async with x as y:
        pass
    async for i in y:
        pass

class K:
    attr = [1,
            2]

    def method(self, v):
        while v > 0:
            v -= 1
            if v == 7:
                break
        else:
            v = -1
        return v

def outer():
    c = 1
    def inner():
        nonlocal c
        c += 1
        return c
    return inner

def loops(m):
    total = 0
    i = 0
    while i < m:
        i += 1
        if i % 2 == 0 and \\
                i % 3 == 0:
            continue
        total += (
            i
            * 2
        )
    assert total >= 0, (
        "negative")
    del i
    return total if total \\
        else -1

def call_chain(d):
    return d.get(
        "a",
        d.get(
            "b",
            0))

def raise_multi(d):
    return (1 +
            d[
                "missing"])

def raise_lambda():
    f = lambda v: (v
                   / 0)
    return f(1)

def raise_comp(xs):
    return [1 / x
            for x in xs]

def raise_in_gen():
    def g():
        yield 1
        yield [][
            3]
    return list(g())

def frames_gen():
    import sys
    yield sys._getframe()
    x = [
        sys._getframe() for _ in range(1)]
    yield x[0]
    yield sys._getframe(
    )
'''

MATCH = '''
def matcher(v):
    match v:
        case [a, b,
              c]:
            return a
        case {"k": k}:
            return k
        case int() | float() if v > 0:
            return v
        case _:
            return None
'''

EXCEPT_STAR = '''
def group(n):
    try:
        raise ExceptionGroup("g", [ValueError(n)])
    except* ValueError as e:
        n = e
    except* TypeError:
        pass
    return n
'''


def long_source():
    """A loop body of 400 lines (jumps > 255 bytes, a line delta of -400
    back to the loop) and one line of over 255 bytes of code."""
    body = "".join("        total += i * %d - (i >> %d)\n" % (k, k % 7)
                   for k in range(400))
    wide = "    big = [" + ", ".join("n + %d" % k for k in range(300)) + "]\n"
    return ("def long_fn(n):\n    total = 0\n    for i in range(n):\n" + body +
            "        if total > 10 ** 9:\n            break\n" + wide +
            "    return total + len(big)\n")


def gap_source():
    """Line deltas of 300, 5000 and 70000 (multi-byte varints, split
    lnotab pairs), forward and back."""
    return ("def gap(x):\n    a = x\n" + "    # gap\n" * 300 + "    b = (a +\n" +
            "\n" * 5000 + "         1)\n" + "\n" * 70000 +
            "    for i in range(b):\n        b += 1\n" + "\n" * 300 +
            "        b -= 2\n    return b\n")


def far_source():
    """A function past line 1,000,000 (the module's table jumps there)."""
    return "x = 1\n" + "\n" * 1000000 + "def far(v):\n    return (v +\n            1)\n"


def sources():
    yield "basic.py", BASIC
    yield "long.py", long_source()
    yield "gap.py", gap_source()
    yield "far.py", far_source()
    if V >= (3, 10):
        yield "match.py", MATCH
    if V >= (3, 11):
        yield "estar.py", EXCEPT_STAR


def table(code):
    return code.co_lnotab if V < (3, 10) else code.co_linetable


def api_lines(code):
    """PyCode_Addr2Line() of each code unit: what frame.f_lineno is."""
    return [addr2line(code, off) for off in range(0, len(code.co_code), 2)]


def own_lines(code):
    """The same from the Python side: co_lines() (3.10+), else
    dis.findlinestarts() (PyCode_Addr2Line()'s rule over co_lnotab)."""
    n = len(code.co_code) // 2
    out = [-1] * n
    if V >= (3, 10):
        for start, end, line in code.co_lines():
            for u in range(start // 2, min(end // 2, n)):
                out[u] = -1 if line is None else line
        return out
    starts = sorted(dis.findlinestarts(code))
    for k, (start, line) in enumerate(starts):
        end = starts[k + 1][0] if k + 1 < len(starts) else 2 * n
        for u in range(start // 2, end // 2):
            out[u] = line
    return out


def positions_lines(code):
    """3.11+: co_positions(), a third reading of the table."""
    return [-1 if p[0] is None else p[0] for p in code.co_positions()]


class Dump:
    def __init__(self):
        self.ids = {}
        self.keep = []
        self.bad = 0

    def code(self, code):
        if id(code) in self.ids:
            return self.ids[id(code)]
        n = len(self.keep)
        self.ids[id(code)] = n
        self.keep.append(code)
        lines = api_lines(code)
        self.check(code, "co_lines/findlinestarts", lines, own_lines(code))
        if V >= (3, 11):
            self.check(code, "co_positions", lines, positions_lines(code))
        print("code %d %d %d %s %s" % (n, code.co_firstlineno, len(code.co_code),
                                       table(code).hex() or "-", code.co_name))
        print("lines %d %s" % (n, " ".join("-" if l < 0 else str(l) for l in lines)))
        for c in code.co_consts:
            if hasattr(c, "co_code"):
                self.code(c)
        return n

    def check(self, code, how, want, got):
        if want != got:
            bad = [i * 2 for i in range(len(want)) if want[i] != got[i]]
            print("%s: %s disagrees with PyCode_Addr2Line at %s" %
                  (code.co_name, how, bad[:10]), file=sys.stderr)
            self.bad += 1

    def frame(self, code, lasti, lineno, shown):
        """One real frame: lineno its tb_lineno/f_lineno, shown the line
        traceback prints; both must be PyCode_Addr2Line()'s."""
        api = addr2line(code, lasti)
        if lineno != shown or (shown if shown is not None else -1) != api:
            print("%s at %d: f_lineno %s, traceback %s, PyCode_Addr2Line %d" %
                  (code.co_name, lasti, lineno, shown, api), file=sys.stderr)
            self.bad += 1
        print("frame %d %d %s" % (self.code(code), lasti, "-" if shown is None else shown))


def traceback_frames(d, ns):
    calls = [lambda: ns["raise_multi"]({}), ns["raise_lambda"],
             lambda: ns["raise_comp"]([1, 0]), ns["raise_in_gen"],
             lambda: ns["handler"]("x")]
    for call in calls:
        try:
            call()
        except Exception as e:
            tb = e.__traceback__
            for tb_, fs in zip(walk(tb), traceback.extract_tb(tb)):
                d.frame(tb_.tb_frame.f_code, tb_.tb_lasti, tb_.tb_lineno, fs.lineno)


def walk(tb):
    while tb:
        yield tb
        tb = tb.tb_next


def live_frames(d, ns):
    g = ns["frames_gen"]()
    f = g.gi_frame
    d.frame(f.f_code, f.f_lasti, f.f_lineno,
            traceback.extract_stack(f, 1)[0].lineno)
    for fr in g:
        d.frame(fr.f_code, fr.f_lasti, fr.f_lineno,
                traceback.extract_stack(fr, 1)[0].lineno)
    gen = ns["gen"](5)
    for _ in range(4):
        f = gen.gi_frame
        d.frame(f.f_code, f.f_lasti, f.f_lineno,
                traceback.extract_stack(f, 1)[0].lineno)
        next(gen)


def main():
    d = Dump()
    print("version %d %d" % V)
    for name, src in sources():
        ns = {"__name__": name}
        code = compile(src, name, "exec")
        d.code(code)
        exec(code, ns)
        if name == "basic.py":
            traceback_frames(d, ns)
            live_frames(d, ns)
    sys.stdout.flush()
    return 1 if d.bad else 0


if __name__ == "__main__":
    sys.exit(main())
