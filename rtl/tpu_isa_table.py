"""The ISA table, rtl/tpu_isa.toml, read and checked for rtl/tpu_isagen.py.

load(path) returns the table as plain dicts and lists, or raises TableError with a message naming
the entry at fault. Python 3 standard library only.
"""

import re
import tomllib

WORD = 32  # the C side sees an instruction as little-endian 32-bit words
UPPER = re.compile(r"[A-Z][A-Z0-9_]*\Z")
LOWER = re.compile(r"[a-z][a-z0-9_]*\Z")
RANGE = re.compile(r"(\d+):(\d+)\Z")


class TableError(Exception):
    pass


def check_keys(where, entry, required, optional=()):
    if not isinstance(entry, dict):
        raise TableError(f"{where}: expected a table")
    for key in required:
        if key not in entry:
            raise TableError(f"{where}: missing '{key}'")
    for key in entry:
        if key not in required and key not in optional:
            raise TableError(f"{where}: unknown key '{key}'")


def integer(where, value, lo, hi):
    # bool is an int to Python, not to TOML
    if type(value) is not int or not lo <= value <= hi:
        raise TableError(f"{where}: expected an integer in {lo}..{hi:#x}, got {value!r}")
    return value


def text(where, value):
    # The text goes into C and Verilog comments.
    if not isinstance(value, str) or not value or "\n" in value or "*/" in value:
        raise TableError(f"{where}: expected a one-line description without '*/'")
    return value


def entries(table, key, where):
    """(label, entry) for each entry; the label names it by position until its name is known."""
    value = table.get(key)
    if not isinstance(value, list) or not value:
        raise TableError(f"{where}: expected one or more [[{where}]] entries")
    return [(f"{where} #{i + 1}", e) for i, e in enumerate(value)]


def named(label, where, entry, pattern, seen):
    """The entry's name checked, as "<where> '<name>'" for later messages."""
    name = entry["name"]
    if not isinstance(name, str) or not pattern.match(name):
        kind = "an upper-case" if pattern is UPPER else "a lower-case"
        raise TableError(f"{label}: name {name!r} is not {kind} identifier")
    if name in seen:
        raise TableError(f"{label}: duplicate name '{name}'")
    seen.add(name)
    return f"{where} '{name}'"


def unique(owners, value, who, what):
    if value in owners:
        raise TableError(f"{who}: {what} already used by {owners[value]}")
    owners[value] = who


def registers(section, where, abits):
    """The [[<where>.reg]] entries of a register map on an abits-wide port, and the owner of each
    offset."""
    regs, names, owner = [], set(), {}
    for label, e in entries(section, "reg", f"{where}.reg"):
        check_keys(label, e, ("name", "offset", "access", "description"), ("bits",))
        who = named(label, f"{where}.reg", e, UPPER, names)
        offset = integer(f"{who} offset", e["offset"], 0, (1 << abits) - 4)
        if offset % 4:
            raise TableError(f"{who}: offset {offset:#x} is not a multiple of 4")
        unique(owner, offset, who, f"offset {offset:#04x}")
        if e["access"] not in ("R", "W", "RW"):
            raise TableError(f"{who}: access {e['access']!r} is not R, W or RW")
        rbits, bnames, bowner = [], set(), {}
        regbits = e.get("bits", [])
        if not isinstance(regbits, list):
            raise TableError(f"{who}: bits must be a list of {{ name, bit, description }}")
        for j, b in enumerate(regbits):
            blabel = f"{who} bit #{j + 1}"
            check_keys(blabel, b, ("name", "bit", "description"))
            bwho = named(blabel, f"{who} bit", b, UPPER, bnames)
            bit = integer(f"{bwho} bit", b["bit"], 0, 31)
            unique(bowner, bit, bwho, f"bit {bit}")
            rbits.append(dict(name=b["name"], bit=bit, who=bwho,
                              description=text(bwho, b["description"])))
        regs.append(dict(name=e["name"], offset=offset, access=e["access"], bits=rbits, who=who,
                         description=text(who, e["description"])))
    return regs, owner


def counters64(owner, base, count, abits, who):
    """Claims count 64-bit counters from base, 8 bytes apart, in owner."""
    for offset in range(base, base + 8 * count, 4):
        if offset + 4 > 1 << abits:
            raise TableError(f"{who}: offset {offset:#x} is past the {abits}-bit CSR space")
        if offset in owner:
            raise TableError(f"{who}: offset {offset:#04x} already used by {owner[offset]}")
        owner[offset] = who


def identity(where, e):
    """magic, version_major and version_minor of e: the ID and VERSION registers' contents."""
    magic = integer(f"{where}.magic", e["magic"], 0, 0xFFFFFFFF)
    major = integer(f"{where}.version_major", e["version_major"], 0, 0xFFFF)
    minor = integer(f"{where}.version_minor", e["version_minor"], 0, 0xFFFF)
    return dict(magic=magic, major=major, minor=minor)


def chip(t):
    """The chip's registers: a map of their own beside each core's, and core k's memory-stall
    counter at mem_stall + 8k for k < cores_max."""
    c = t["chip"]
    keys = ("addr_bits", "cores_max", "magic", "version_major", "version_minor", "mem_stall")
    check_keys("chip", c, keys + ("reg",))
    abits = integer("chip.addr_bits", c["addr_bits"], 2, 32)
    cores = integer("chip.cores_max", c["cores_max"], 1, 64)
    regs, owner = registers(c, "chip", abits)
    stall = integer("chip.mem_stall", c["mem_stall"], 0, (1 << abits) - 8)
    if stall % 8:
        raise TableError(f"chip.mem_stall: {stall:#x} is not a multiple of 8")
    counters64(owner, stall, cores, abits, "chip.mem_stall")
    return dict(abits=abits, cores_max=cores, regs=regs, mem_stall=stall,
                **identity("chip", c))


# ------------------------------------------------------------------------------- footprints

TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_]\w*)|(.))")
FUNCTIONS = {"ceil": 2, "nz": 1}


def expression(who, src, names):
    """src parsed into a tree of tuples: ("num", v), ("var", name), ("+" | "-" | "*", x, y),
    ("ceil", x, y), ("nz", x). names: the variables it may use."""
    tokens = [m.group(1) or m.group(2) or m.group(3) for m in TOKEN.finditer(src)
              if (m.group(1) or m.group(2) or m.group(3) or "").strip()]
    pos = 0

    def fail(what):
        raise TableError(f"{who}: {src!r}: {what}")

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take(want=None):
        nonlocal pos
        t = peek()
        if t is None or (want is not None and t != want):
            fail(f"expected {want or 'more'}, found {t or 'the end'}")
        pos += 1
        return t

    def atom():
        t = take()
        if t.isdigit():
            return ("num", int(t))
        if t == "(":
            x = sum_()
            take(")")
            return x
        if t in FUNCTIONS:
            take("(")
            args = [sum_()]
            while peek() == ",":
                take(",")
                args.append(sum_())
            take(")")
            if len(args) != FUNCTIONS[t]:
                fail(f"{t} takes {FUNCTIONS[t]} argument(s)")
            return (t, *args)
        if t in names:
            return ("var", t)
        fail(f"unknown name {t!r}" if t[0].isalpha() or t[0] == "_" else f"unexpected {t!r}")

    def product():
        x = atom()
        while peek() == "*":
            take()
            x = ("*", x, atom())
        return x

    def sum_():
        x = product()
        while peek() in ("+", "-"):
            x = (take(), x, product())
        return x

    if not isinstance(src, str):
        fail("expected an expression in a string")
    tree = sum_()
    if peek() is not None:
        fail(f"unexpected {peek()!r}")
    return tree


def condition(who, src, takes):
    """src ("SRC_ACC & BIAS", "!POOL") as a list of (flag, required value); takes: the flags the
    opcode takes."""
    terms = []
    for term in src.split("&") if isinstance(src, str) else [None]:
        term = (term or "").strip()
        flag = term.lstrip("!").strip()
        if flag not in takes:
            raise TableError(f"{who}: when {src!r}: {flag!r} is not a flag the opcode takes")
        terms.append((flag, not term.startswith("!")))
    return terms


PRECEDENCE = {"+": 1, "-": 1, "*": 2}


def infix(tree, call, num=str):
    """An expression tree as text with the fewest parentheses; call(name, args) prints a
    function (ceil, nz) of its printed arguments, num an integer."""
    def show(t, outer, right):
        if t[0] == "num":
            return num(t[1])
        if t[0] == "var":
            return t[1]
        if t[0] in PRECEDENCE:
            p = PRECEDENCE[t[0]]
            text = f"{show(t[1], p, False)} {t[0]} {show(t[2], p, True)}"
            return f"({text})" if p < outer or (p == outer and right) else text
        return call(t[0], [show(a, 0, False) for a in t[1:]])
    return show(tree, 0, False)


def read_spaces(t, faults, regs):
    """The spaces of footprints: each with its limit (a CSR) and fault when ranged."""
    spaces, names = [], set()
    fault_names = {f["name"] for f in faults}
    reg_names = {r["name"] for r in regs}
    for label, e in entries(t, "space", "space"):
        check_keys(label, e, ("name", "unit", "interlocked", "description"), ("limit", "fault"))
        who = named(label, "space", e, LOWER, names)
        if ("limit" in e) != ("fault" in e):
            raise TableError(f"{who}: limit and fault go together")
        if "limit" in e and e["limit"] not in reg_names:
            raise TableError(f"{who}: limit {e['limit']!r} is not a CSR")
        if "fault" in e and e["fault"] not in fault_names:
            raise TableError(f"{who}: fault {e['fault']!r} is not a fault code")
        if not isinstance(e["interlocked"], bool):
            raise TableError(f"{who}: interlocked must be true or false")
        spaces.append(dict(name=e["name"], unit=text(who, e["unit"]), limit=e.get("limit"),
                           fault=e.get("fault"), interlocked=e["interlocked"], who=who,
                           description=text(who, e["description"])))
    return spaces


def exclusive(x, y):
    """Whether two conditions cannot hold together: one needs a flag the other forbids."""
    return any((flag, not value) in y for flag, value in x)


def accesses(op, e, spaces, flags, fields, window):
    """The opcode's reads and writes, checked."""
    takes = {f["name"] for f in flags if op["name"] in f["opcodes"]}
    names = {f["name"] for f in fields if f["name"] not in ("op", "flags")}
    names |= {f["name"] for f in window} | {"N"}
    space_names = [s["name"] for s in spaces]
    out = []
    for key, write in (("reads", False), ("writes", True)):
        value = e.get(key, [])
        if not isinstance(value, list):
            raise TableError(f"{op['who']}: {key} must be a list of {{ space, first, ... }}")
        for i, a in enumerate(value):
            who = f"{op['who']} {key} #{i + 1}"
            check_keys(who, a, ("space",), ("first", "count", "step", "size", "when"))
            if a["space"] not in space_names:
                raise TableError(f"{who}: no space named {a['space']!r}")
            acc = dict(space=a["space"], write=write, who=who,
                       when=condition(who, a["when"], takes) if "when" in a else [])
            for part, default in (("first", "0"), ("count", "1"), ("step", "1"), ("size", "1")):
                acc[part] = expression(f"{who} {part}", a.get(part, default), names)
            for other in out:
                if (other["space"], other["write"]) == (acc["space"], write) and \
                        not exclusive(other["when"], acc["when"]):
                    raise TableError(f"{who}: may hold together with {other['who']} (one access "
                                     f"per space and direction)")
            out.append(acc)
    return out


def load(path):
    """The table, checked, as plain dicts and lists."""
    with open(path, "rb") as f:
        t = tomllib.load(f)
    check_keys("table", t, ("insn", "opcode", "flag", "pool", "space", "fault", "csr", "id", "perf",
                            "chip"))

    # Fields: they tile the instruction, none crosses a word.
    insn = t["insn"]
    check_keys("insn", insn, ("bits", "field"))
    bits = integer("insn.bits", insn["bits"], WORD, 4096)
    if bits % WORD:
        raise TableError(f"insn.bits: {bits} is not a multiple of {WORD}")
    fields, names, owner = [], set(), {}
    for label, e in entries(insn, "field", "insn.field"):
        check_keys(label, e, ("name", "bits", "description"))
        who = named(label, "insn.field", e, LOWER, names)
        m = RANGE.match(e["bits"]) if isinstance(e["bits"], str) else None
        if not m or int(m[1]) < int(m[2]) or int(m[1]) >= bits:
            raise TableError(f"{who}: bits {e['bits']!r} is not \"msb:lsb\" within 0..{bits - 1}")
        msb, lsb = int(m[1]), int(m[2])
        if msb // WORD != lsb // WORD:
            raise TableError(f"{who}: bits {msb}:{lsb} cross a {WORD}-bit word boundary")
        for b in range(lsb, msb + 1):
            unique(owner, b, who, f"bit {b}")
        fields.append(dict(name=e["name"], msb=msb, lsb=lsb, width=msb - lsb + 1, who=who,
                           description=text(who, e["description"])))
    gaps = [b for b in range(bits) if b not in owner]
    if gaps:
        raise TableError(f"insn.field: bit {gaps[0]} is in no field (unused bits need a field)")
    fields.sort(key=lambda f: f["lsb"])
    width = {f["name"]: f["width"] for f in fields}
    for need in ("op", "flags"):
        if need not in width:
            raise TableError(f"insn.field: no field named '{need}'")

    # Opcodes: 0 stays illegal, it shows an empty queue in waveforms (tpu_seq head_op).
    opcodes, names, owner = [], set(), {}
    for label, e in entries(t, "opcode", "opcode"):
        check_keys(label, e, ("name", "value", "description"), ("reads", "writes"))
        who = named(label, "opcode", e, UPPER, names)
        value = integer(f"{who} value", e["value"], 1, (1 << width["op"]) - 1)
        unique(owner, value, who, f"value {value:#04x}")
        opcodes.append(dict(name=e["name"], value=value, flags=0, who=who, entry=e,
                            description=text(who, e["description"])))
    by_name = {o["name"]: o for o in opcodes}

    flags, names, owner = [], set(), {}
    for label, e in entries(t, "flag", "flag"):
        check_keys(label, e, ("name", "bit", "opcodes", "description"))
        who = named(label, "flag", e, UPPER, names)
        bit = integer(f"{who} bit", e["bit"], 0, width["flags"] - 1)
        unique(owner, bit, who, f"bit {bit}")
        ops = e["opcodes"]
        if not isinstance(ops, list) or not ops:
            raise TableError(f"{who}: opcodes must list the opcodes that take it")
        for op in ops:
            if not isinstance(op, str) or op not in by_name:
                raise TableError(f"{who}: no opcode named {op!r}")
            by_name[op]["flags"] |= 1 << bit
        flags.append(dict(name=e["name"], bit=bit, opcodes=ops, who=who,
                          description=text(who, e["description"])))

    # The pooling window: sub-fields of one instruction field, none overlapping another.
    pool = t["pool"]
    check_keys("pool", pool, ("in_field", "field"))
    host = pool["in_field"]
    if host not in width:
        raise TableError(f"pool.in_field: no instruction field named {host!r}")
    window, names, owner = [], set(), {}
    for label, e in entries(pool, "field", "pool.field"):
        check_keys(label, e, ("name", "bits", "description"))
        who = named(label, "pool.field", e, LOWER, names)
        m = RANGE.match(e["bits"]) if isinstance(e["bits"], str) else None
        if not m or int(m[1]) < int(m[2]) or int(m[1]) >= width[host]:
            raise TableError(f"{who}: bits {e['bits']!r} is not \"msb:lsb\" within the "
                             f"{width[host]} bits of {host}")
        msb, lsb = int(m[1]), int(m[2])
        for b in range(lsb, msb + 1):
            unique(owner, b, who, f"bit {b}")
        window.append(dict(name=e["name"], msb=msb, lsb=lsb, width=msb - lsb + 1, who=who,
                           description=text(who, e["description"])))

    fault = t["fault"]
    check_keys("fault", fault, ("bits", "code"))
    fbits = integer("fault.bits", fault["bits"], 1, 32)
    faults, names, owner = [], set(), {}
    for label, e in entries(fault, "code", "fault.code"):
        check_keys(label, e, ("name", "value", "description"))
        who = named(label, "fault.code", e, UPPER, names)
        value = integer(f"{who} value", e["value"], 0, (1 << fbits) - 1)
        unique(owner, value, who, f"value {value}")
        faults.append(dict(name=e["name"], value=value, who=who,
                           description=text(who, e["description"])))
    if owner.get(0) != "fault.code 'NONE'":
        raise TableError("fault.code: code 0 must be named NONE (every consumer reads 0 as no fault)")

    csr = t["csr"]
    check_keys("csr", csr, ("addr_bits", "reg"))
    abits = integer("csr.addr_bits", csr["addr_bits"], 2, 32)
    regs, owner = registers(csr, "csr", abits)

    check_keys("id", t["id"], ("magic", "version_major", "version_minor"))
    ident = identity("id", t["id"])

    # Counters: 64 bits, 8 bytes apart, in an address range of their own.
    perf = t["perf"]
    check_keys("perf", perf, ("base", "counter"))
    base = integer("perf.base", perf["base"], 0, (1 << abits) - 8)
    if base % 8:
        raise TableError(f"perf.base: {base:#x} is not a multiple of 8")
    counters, names = [], set()
    for label, e in entries(perf, "counter", "perf.counter"):
        check_keys(label, e, ("name", "description"))
        who = named(label, "perf.counter", e, LOWER, names)
        counters64(owner, base + 8 * len(counters), 1, abits, who)
        counters.append(dict(name=e["name"], who=who, description=text(who, e["description"])))

    spaces = read_spaces(t, faults, regs)
    for o in opcodes:
        o["accesses"] = accesses(o, o.pop("entry"), spaces, flags, fields, window)

    return dict(bits=bits, fields=fields, opcodes=opcodes, flags=flags, pool=window, spaces=spaces,
                pool_field=host, fbits=fbits, faults=faults, abits=abits, regs=regs,
                perf_base=base, counters=counters, chip=chip(t), **ident)
