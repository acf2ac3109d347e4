#!/usr/bin/env python3
"""Generate the ISA definitions of rtl/tpu_isa.toml for Verilog and C.

usage: tpu_isagen.py TABLE OUTDIR

Checks the table and writes OUTDIR/tpu_isa.vh (a Verilog include of `defines only: localparams
in an include would be unused parameters in most modules that include it) and OUTDIR/tpu_isa.h
(a C header of enums and #defines only, so that the freestanding firmware can include it). A
file is rewritten only when its contents change, so that builds depending on it are not redone
needlessly. A bad table fails with a message naming the entry, and nothing is written.
"""

import os
import re
import sys
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


def load(path):
    """The table, checked, as plain dicts and lists."""
    with open(path, "rb") as f:
        t = tomllib.load(f)
    check_keys("table", t, ("insn", "opcode", "flag", "pool", "fault", "csr", "id", "perf"))

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
        check_keys(label, e, ("name", "value", "description"))
        who = named(label, "opcode", e, UPPER, names)
        value = integer(f"{who} value", e["value"], 1, (1 << width["op"]) - 1)
        unique(owner, value, who, f"value {value:#04x}")
        opcodes.append(dict(name=e["name"], value=value, flags=0, who=who,
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
    regs, names, owner = [], set(), {}
    for label, e in entries(csr, "reg", "csr.reg"):
        check_keys(label, e, ("name", "offset", "access", "description"), ("bits",))
        who = named(label, "csr.reg", e, UPPER, names)
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

    ident = t["id"]
    check_keys("id", ident, ("magic", "version_major", "version_minor"))
    magic = integer("id.magic", ident["magic"], 0, 0xFFFFFFFF)
    major = integer("id.version_major", ident["version_major"], 0, 0xFFFF)
    minor = integer("id.version_minor", ident["version_minor"], 0, 0xFFFF)

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
        offset = base + 8 * len(counters)
        if offset + 8 > 1 << abits:
            raise TableError(f"{who}: offset {offset:#x} is past the {abits}-bit CSR space")
        for o in (offset, offset + 4):
            if o in owner:
                raise TableError(f"{who}: offset {o:#04x} already used by {owner[o]}")
        counters.append(dict(name=e["name"], who=who, description=text(who, e["description"])))

    return dict(bits=bits, fields=fields, opcodes=opcodes, flags=flags, pool=window,
                pool_field=host, fbits=fbits,
                faults=faults, abits=abits, regs=regs, magic=magic, major=major, minor=minor,
                perf_base=base, counters=counters)


class Names:
    """The names one output defines: no two entries may generate the same one."""

    def __init__(self):
        self.owner = {}

    def __call__(self, name, who):
        if name in self.owner:
            raise TableError(f"{who}: generates {name}, as does {self.owner[name]}")
        self.owner[name] = who
        return name


GEN = "the generator"


def verilog(isa, source):
    out = []
    put = out.append
    names = Names()

    def comment(s):
        put(f"// {s}")

    def define(name, value="", who=GEN):
        put(f"`define {names(name, who)} {value}".rstrip())

    def hexa(bits, v):
        return f"{bits}'h{v:0{(bits + 3) // 4}x}"

    comment(f"Generated by rtl/tpu_isagen.py from {source}: edit the table, not this file.")
    put("`ifndef TPU_ISA_VH")
    define("TPU_ISA_VH")
    put("")
    comment("Instruction fields: q[`TPU_INSN_OP] is the op field of instruction q, "
            "`TPU_INSN_OP_W its width.")
    define("TPU_INSN_W", isa["bits"])
    for f in isa["fields"]:
        n = f["name"].upper()
        comment(f"{f['name']}: {f['description']}")
        define(f"TPU_INSN_{n}", f"{f['msb']}:{f['lsb']}", f["who"])
        define(f"TPU_INSN_{n}_W", f["width"], f["who"])
    width = {f["name"]: f["width"] for f in isa["fields"]}
    put("")
    comment("Opcodes; TPU_OP_<op>_FLAGS: the flags the opcode takes.")
    for o in isa["opcodes"]:
        comment(f"{o['name']}: {o['description']}")
        define(f"TPU_OP_{o['name']}", hexa(width["op"], o["value"]), o["who"])
        define(f"TPU_OP_{o['name']}_FLAGS", hexa(width["flags"], o["flags"]), o["who"])
    put("")
    comment("Flags: bit index in the flags field.")
    for f in sorted(isa["flags"], key=lambda f: f["bit"]):
        comment(f"{f['name']} ({', '.join(f['opcodes'])}): {f['description']}")
        define(f"TPU_F_{f['name']}_BIT", f["bit"], f["who"])
    put("")
    comment(f"ACTIVATE.POOL window: v[`TPU_POOL_PH] is sub-field ph of the {isa['pool_field']} "
            "field's value v.")
    for f in isa["pool"]:
        comment(f"{f['name']}: {f['description']}")
        define(f"TPU_POOL_{f['name'].upper()}", f"{f['msb']}:{f['lsb']}", f["who"])
    put("")
    comment("Fault codes (the values of ERROR_CODE), TPU_FAULT_W bits.")
    define("TPU_FAULT_W", isa["fbits"])
    for e in isa["faults"]:
        comment(f"{e['name']}: {e['description']}")
        define(f"TPU_FAULT_{e['name']}", f"{isa['fbits']}'d{e['value']}", e["who"])
    put("")
    comment("CSR byte offsets; TPU_<reg>_<bit>_BIT: the index of a register's named bit.")
    for r in isa["regs"]:
        comment(f"{r['name']} ({r['access']}): {r['description']}")
        define(f"TPU_CSR_{r['name']}", hexa(isa["abits"], r["offset"]), r["who"])
        for b in r["bits"]:
            define(f"TPU_{r['name']}_{b['name']}_BIT", b["bit"], b["who"])
    comment("ID and VERSION contents.")
    define("TPU_ID_MAGIC", hexa(32, isa["magic"]))
    define("TPU_VERSION", hexa(32, isa["major"] << 16 | isa["minor"]))
    put("")
    comment("Performance counters: counter i (64 bits) at TPU_CSR_PERF_BASE + 8i.")
    define("TPU_CSR_PERF_BASE", hexa(isa["abits"], isa["perf_base"]))
    define("TPU_PERF_COUNT", len(isa["counters"]))
    for i, c in enumerate(isa["counters"]):
        comment(f"{c['name']}: {c['description']}")
        define(f"TPU_PERF_{c['name'].upper()}", i, c["who"])
    put("")
    put("`endif")
    return "\n".join(out) + "\n"


def c_header(isa, source):
    out = []
    put = out.append
    names = Names()

    def define(name, value="", who=GEN, note=None):
        put(f"#define {names(name, who)} {value}".rstrip() + (f" /* {note} */" if note else ""))

    def enum(tag, items):
        """items: (name, value or None, comment, who)."""
        put(f"enum {tag} {{")
        for name, value, note, who in items:
            value = "" if value is None else f" = {value}"
            put(f"    {names(name, who)}{value}," + (f" /* {note} */" if note else ""))
        put("};")

    def xmacro(name, items):
        lines = [f"#define {names(name, GEN)}(X)"] + [f"    X({item})" for item in items]
        put(" \\\n".join(lines))

    put(f"/* Generated by rtl/tpu_isagen.py from {source}: edit the table, not this file.")
    put(" * Only enums and #defines: the freestanding firmware includes it too. */")
    put("#ifndef TPU_ISA_H")
    define("TPU_ISA_H")
    put("")
    words = isa["bits"] // WORD
    put(f"/* An instruction is {isa['bits']} bits: {words} little-endian {WORD}-bit words, "
        f"w[0] = bits {WORD - 1}:0. */")
    define("TPU_INSN_BITS", isa["bits"])
    define("TPU_INSN_WORDS", words)
    put("/* Field F lies in word TPU_INSN_F_WORD from bit TPU_INSN_F_SHIFT up; TPU_INSN_F_MASK is")
    put(" * its largest value. */")
    for f in isa["fields"]:
        n = f["name"].upper()
        put(f"/* {f['name']}: {f['description']} */")
        define(f"TPU_INSN_{n}_WORD", f["lsb"] // WORD, f["who"])
        define(f"TPU_INSN_{n}_SHIFT", f["lsb"] % WORD, f["who"])
        define(f"TPU_INSN_{n}_MASK", f"{(1 << f['width']) - 1:#x}u", f["who"])
    put("/* Field F (OP, FLAGS, ...) of the instruction words w; v put into field F of w, which")
    put(" * must be zero there (v is cut to the field's width). */")
    define("TPU_INSN_GET(w, F)",
           "(((w)[TPU_INSN_##F##_WORD] >> TPU_INSN_##F##_SHIFT) & TPU_INSN_##F##_MASK)")
    define("TPU_INSN_PUT(w, F, v)",
           "((w)[TPU_INSN_##F##_WORD] |= ((v) & TPU_INSN_##F##_MASK) << TPU_INSN_##F##_SHIFT)")
    put("/* X(NAME, name) for every field, lowest bits first. */")
    xmacro("TPU_FOR_EACH_FIELD", [f"{f['name'].upper()}, {f['name']}" for f in isa["fields"]])
    put("")

    put("/* Opcodes (op field); every other value is illegal. */")
    enum("tpu_opcode", [(f"TPU_OP_{o['name']}", f"{o['value']:#04x}", o["description"], o["who"])
                        for o in isa["opcodes"]])
    put("/* The flags each opcode takes (TPU_F_* bits). */")
    for o in isa["opcodes"]:
        define(f"TPU_OP_{o['name']}_FLAGS", f"{o['flags']:#04x}u", o["who"])
    put("/* X(NAME) for every opcode. */")
    xmacro("TPU_FOR_EACH_OPCODE", [o["name"] for o in isa["opcodes"]])
    put("")

    put("/* Flags (bits of the flags field); the bits outside TPU_F_ALL are reserved. */")
    enum("tpu_flag", [(f"TPU_F_{f['name']}", f"1u << {f['bit']}",
                       f"{', '.join(f['opcodes'])}: {f['description']}", f["who"])
                      for f in sorted(isa["flags"], key=lambda f: f["bit"])])
    define("TPU_F_ALL", f"{sum(1 << f['bit'] for f in isa['flags']):#04x}u")
    put("/* X(NAME) for every flag, in the order the disassembler prints them. */")
    xmacro("TPU_FOR_EACH_FLAG", [f["name"] for f in isa["flags"]])
    put("")

    put(f"/* ACTIVATE.POOL window: sub-field F of the {isa['pool_field']} field's value lies from")
    put(" * bit TPU_POOL_F_SHIFT up; TPU_POOL_F_MASK is its largest value. */")
    for f in isa["pool"]:
        n = f["name"].upper()
        put(f"/* {f['name']}: {f['description']} */")
        define(f"TPU_POOL_{n}_SHIFT", f["lsb"], f["who"])
        define(f"TPU_POOL_{n}_MASK", f"{(1 << f['width']) - 1:#x}u", f["who"])
    define("TPU_POOL_GET(v, F)", "(((v) >> TPU_POOL_##F##_SHIFT) & TPU_POOL_##F##_MASK)")
    define("TPU_POOL_PUT(F, v)", "(((uint32_t)(v) & TPU_POOL_##F##_MASK) << TPU_POOL_##F##_SHIFT)")
    put("")

    put("/* Fault codes (the values of ERROR_CODE). */")
    enum("tpu_fault", [(f"TPU_FAULT_{e['name']}", e["value"], e["description"], e["who"])
                       for e in isa["faults"]])
    put("/* X(NAME) for every fault code. */")
    xmacro("TPU_FOR_EACH_FAULT", [e["name"] for e in isa["faults"]])
    put("")

    put("/* Control/status register byte offsets. */")
    enum("tpu_csr", [(f"TPU_CSR_{r['name']}", f"{r['offset']:#04x}",
                      f"{r['access']}: {r['description']}", r["who"]) for r in isa["regs"]]
         + [("TPU_CSR_PERF_BASE", f"{isa['perf_base']:#04x}",
             "TPU_PERF_COUNT 64-bit counters, 8 bytes apart", GEN)])
    put("/* The named bits of registers. */")
    for r in isa["regs"]:
        for b in r["bits"]:
            define(f"TPU_{r['name']}_{b['name']}", f"(1u << {b['bit']})", b["who"],
                   b["description"])
    put("/* ID and VERSION contents: a core is compatible when its major version matches. */")
    define("TPU_ID_MAGIC", f"{isa['magic']:#010x}u")
    define("TPU_VERSION", f"{isa['major'] << 16 | isa['minor']:#010x}u")
    define("TPU_VERSION_MAJOR", f"{isa['major']}u")
    define("TPU_VERSION_MINOR", f"{isa['minor']}u")
    put("")

    put("/* Performance counters, in CSR order. */")
    enum("tpu_perf_counter", [(f"TPU_PERF_{c['name'].upper()}", None, c["description"],
                               c["who"]) for c in isa["counters"]]
         + [("TPU_PERF_COUNT", None, None, GEN)])
    put("/* X(NAME, \"name\") for every counter, in order. */")
    xmacro("TPU_FOR_EACH_PERF", [f"{c['name'].upper()}, \"{c['name']}\"" for c in isa["counters"]])
    put("")
    put("#endif")
    return "\n".join(out) + "\n"


def write(path, content):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == content:
                return
    except FileNotFoundError:
        pass
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(content)
    os.replace(tmp, path)


def main(argv):
    if len(argv) != 3:
        print("usage: tpu_isagen.py TABLE OUTDIR", file=sys.stderr)
        return 2
    table, outdir = argv[1], argv[2]
    source = "rtl/" + os.path.basename(table)
    try:
        isa = load(table)
        outputs = {"tpu_isa.vh": verilog(isa, source), "tpu_isa.h": c_header(isa, source)}
    except (OSError, tomllib.TOMLDecodeError, TableError) as e:
        print(f"tpu_isagen: {table}: {e}", file=sys.stderr)
        return 1
    os.makedirs(outdir, exist_ok=True)
    for name, content in outputs.items():
        write(os.path.join(outdir, name), content)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
