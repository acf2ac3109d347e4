"""docs/isa.md's tables checked against the ISA table, for rtl/tpu_isagen.py --check-doc.

The page explains what the table's values mean, in prose of its own; what it must repeat exactly
is checked: the instruction fields and their bits, the flags' bits, the opcodes, the fault codes,
the core's and the chip's registers (offsets, access, the ID and version values, the named bits),
the performance counters, and the footprints, whose table is the table's reads and writes as
footprint_rows() prints them. Python 3 standard library only.
"""

import re

from tpu_isa_table import WORD, infix

def show(tree):
    return infix(tree, lambda f, args: f"{f}({', '.join(args)})")


def access_text(a):
    """One access: `mem [a + i * stride, +len), i < rows` and the flags it needs."""
    first, count, step, size = a["first"], a["count"], a["step"], a["size"]
    one = ("num", 1)
    if (first, count, step, size) == (("num", 0), one, one, one):
        text = a["space"]
    elif count == one:
        text = f"{a['space']} [{show(first)}, +{show(size)})"
    elif step == size:  # the blocks touch: one range
        total = count if size == one else ("*", count, size)
        text = f"{a['space']} [{show(first)}, +{show(total)})"
    else:
        at = show(("+", first, ("*", ("var", "i"), step)))
        text = (f"{a['space']} {at}" if size == one else
                f"{a['space']} [{at}, +{show(size)})") + f", i < {show(count)}"
    when = ", ".join(("" if value else "not ") + flag for flag, value in a["when"])
    return f"`{text}`" + (f" ({when})" if when else "")


def footprint_rows(isa):
    """The rows of the page's footprint table: op, reads, writes."""
    rows = []
    for o in isa["opcodes"]:
        cells = [f"`{o['name']}`"]
        for write in (False, True):
            cells.append("; ".join(access_text(a) for a in o["accesses"] if a["write"] == write)
                         or "none")
        rows.append(cells)
    return rows


def tables(lines):
    """The page's tables: (heading, header cells, [(line number, cells)]) in order."""
    out, heading, i = [], "", 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        if line.startswith("|") and i + 1 < len(lines) and re.match(r"\|[-| :]+\|$", lines[i + 1]):
            header = cells(line)
            rows = []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append((i + 1, cells(lines[i])))
                i += 1
            out.append((heading, header, rows))
            continue
        i += 1
    return out


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


class Check:
    def __init__(self, path):
        self.path, self.errors = path, []

    def fail(self, line, what):
        self.errors.append(f"{self.path}:{line}: {what}")

    def rows(self, name, found, want, columns):
        """found: [(line, cells)]; want: the expected leading cells of each row, in order."""
        if found is None:
            self.fail(0, f"no {name} table")
            return
        for k, cells_want in enumerate(want):
            if k >= len(found):
                self.fail(found[-1][0] if found else 0, f"{name}: missing the row {cells_want}")
                continue
            line, got = found[k]
            if got[:columns] != cells_want[:columns]:
                self.fail(line, f"{name}: expected {' | '.join(cells_want[:columns])}, "
                                f"found {' | '.join(got[:columns])}")
        for line, got in found[len(want):]:
            self.fail(line, f"{name}: a row the table does not have: {' | '.join(got)}")


def hexa(v, digits=2):
    return f"0x{v:0{digits}X}"


def check_registers(check, name, found, regs, ident):
    """Offsets, names and access in order, the ID and version values and the named bits in
    each register's meaning."""
    check.rows(name, found, [[hexa(r["offset"]), f"`{r['name']}`", r["access"]] for r in regs], 3)
    for (line, got), r in zip(found or [], regs):
        meaning = got[3] if len(got) > 3 else ""
        if r["name"] in ident and ident[r["name"]] not in meaning:
            check.fail(line, f"{name}: {r['name']} must read {ident[r['name']]}")
        for b in r["bits"]:
            if not re.search(rf"bit{b['bit']} `?{b['name']}\b", meaning):
                check.fail(line, f"{name}: {r['name']} must name bit{b['bit']} {b['name']}")


def check_doc(isa, path):
    """The list of mismatches between docs/isa.md at path and the table (empty: none)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    check = Check(path)
    found = {}
    for heading, header, rows in tables(lines):
        key = tuple(header)
        if key == ("offset", "name", "access", "meaning"):
            key = ("chip registers",) if "Chip" in heading else ("registers",)
        found.setdefault(key, rows)

    check.rows("instruction fields", found.get(("word", "bits", "field", "meaning")),
               [[f"w{f['lsb'] // WORD}", f"{f['msb'] % WORD}:{f['lsb'] % WORD}", f"`{f['name']}`"]
                for f in sorted(isa["fields"], key=lambda f: f["lsb"])], 3)
    check.rows("opcodes", found.get(("op", "name", "fields used", "effect")),
               [[hexa(o["value"]), f"`{o['name']}`"] for o in isa["opcodes"]], 2)
    check.rows("faults", found.get(("code", "name", "raised when")),
               [[str(e["value"]), f"`{e['name']}`"] for e in isa["faults"]], 2)
    ident = {"ID": hexa(isa["magic"], 8),
             "VERSION": f"{hexa(isa['major'] << 16 | isa['minor'], 8)} "
                        f"({isa['major']}.{isa['minor']})"}
    check_registers(check, "registers", found.get(("registers",)), isa["regs"], ident)
    chip = isa["chip"]
    ident = {"CHIP_ID": hexa(chip["magic"], 8),
             "CHIP_VERSION": f"{hexa(chip['major'] << 16 | chip['minor'], 8)} "
                             f"({chip['major']}.{chip['minor']})"}
    stall = dict(name="MEM_STALL", offset=chip["mem_stall"], access="R", bits=[])
    chip_found = found.get(("chip registers",))
    check_registers(check, "chip registers", chip_found and chip_found[:-1], chip["regs"], ident)
    if chip_found:
        line, got = chip_found[-1]
        want = [f"{hexa(stall['offset'])} + 8k", "`MEM_STALL` of core k", "R"]
        if got[:3] != want:
            check.fail(line, f"chip registers: expected {' | '.join(want)}, found "
                             f"{' | '.join(got[:3])}")
    check.rows("performance counters",
               found.get(("offset", "name", "counts cycles (or units) in which")),
               [[hexa(isa["perf_base"] + 8 * i), f"`PERF_{c['name'].upper()}`"]
                for i, c in enumerate(isa["counters"])], 2)
    check.rows("footprints", found.get(("op", "reads", "writes")), footprint_rows(isa), 3)

    # The flags, in one sentence: "Flags: `ACC`=bit0, `LOAD`=bit1, ...".
    sentence = next(((i + 1, l) for i, l in enumerate(lines) if l.startswith("Flags: ")), None)
    if sentence is None:
        check.fail(0, "no \"Flags: \" sentence")
    else:
        text = sentence[1] + " " + lines[sentence[0]]  # it may wrap once
        got = sorted((int(b), n) for n, b in re.findall(r"`(\w+)`=bit(\d+)", text))
        want = sorted((f["bit"], f["name"]) for f in isa["flags"])
        if got != want:
            check.fail(sentence[0], f"flags: expected {want}, found {got}")
    return check.errors
