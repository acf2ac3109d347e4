"""Which processing elements of the systolic array hold live work, cycle by cycle, read from a
VCD waveform (`tpusim gemm --trace wave.vcd`, `tpusim run --trace`, Runtime traces).

The PEs carry no valid bit (a slot without a row holds zero activations, rtl/tpu_mxu.v), so a PE's
own registers cannot tell a zero activation from an idle slot. The MXU's row_fire (its register
v2) can: it is high in the cycles a unified-buffer row enters array row 0. The array then moves
that row's element r into row r r cycles later and one column to the right per cycle
(rtl/tpu_array.v, rtl/tpu_pe.v), so PE (r, c) multiplies a live element in cycle t exactly when
row_fire was high in cycle t - r - c. This reads row_fire and the clock, nothing else, so a long
window reads fast; the geometry is checked against the PEs' traced activations in
tests/python/test_plot.py.

The reader is a small one of its own: it needs two one-bit signals, read in one pass."""
import re

import numpy as np

from .errors import ArgumentError

_VAR = re.compile(r"\$var\s+\S+\s+(\d+)\s+(\S+)\s+(\S+)")
_XZ = str.maketrans("xzXZ", "0000")
_ROW = re.compile(r"\$scope\s+\S+\s+g_row[\[(](\d+)")


def read_signals(path, names):
    """The values of the signals `names` (a dict: key -> predicate on the signal's dotted path)
    in every clock cycle of the VCD file at path, the clock being the first signal named clk:
    an int64 array (cycles,) per key, each cycle's value after its rising edge (x and z bits
    read as 0; values wider than 63 bits are not read). The first match of each predicate is
    taken."""
    ids, clk, scope = {}, None, []
    with open(path) as f:
        for line in f:
            s = line.split()
            if not s:
                continue
            if s[0] == "$scope":
                scope.append(s[2])
            elif s[0] == "$upscope":
                scope.pop()
            elif s[0] == "$var":
                m = _VAR.match(line.strip())
                full = ".".join(scope + [m.group(3)])
                if clk is None and m.group(3) == "clk":
                    clk = m.group(2)
                for key, want in names.items():
                    if key not in ids and int(m.group(1)) < 64 and want(full):
                        ids[key] = m.group(2)
            elif s[0] == "$enddefinitions":
                break
        missing = [k for k in names if k not in ids]
        if clk is None or missing:
            raise ArgumentError(f"{path}: no {'clk' if clk is None else ', '.join(missing)} "
                                "signal in the trace")
        by_id = {}  # a net's several names share one identifier
        for k, v in ids.items():
            by_id.setdefault(v, []).append(k)
        now = {k: 0 for k in names}
        values = {k: [] for k in names}
        clk_val, rose = 0, False
        for line in f:
            c = line[0]
            if c == "#":
                if rose:  # the cycle that began at the last timestamp's rising edge
                    for k in names:
                        values[k].append(now[k])
                rose = False
            elif c in "01xzXZ":
                ident, bit = line[1:].strip(), int(c == "1")
                if ident == clk:
                    rose = bit and not clk_val
                    clk_val = bit
                for k in by_id.get(ident, ()):
                    now[k] = bit
            elif c in "bB":
                bits, ident = line[1:].split()
                for k in by_id.get(ident, ()):
                    now[k] = int(bits.translate(_XZ), 2)
        if rose:
            for k in names:
                values[k].append(now[k])
    return {k: np.array(v, dtype=np.int64) for k, v in values.items()}


def array_size(path):
    """The N of the array traced in the VCD at path: the number of rows of PEs it declares."""
    rows = set()
    with open(path) as f:
        for line in f:
            if line.startswith("$enddefinitions"):
                break
            m = _ROW.match(line.strip())
            if m:
                rows.add(int(m.group(1)))
    if not rows:
        raise ArgumentError(f"{path}: no systolic array (g_row scopes) in the trace")
    return max(rows) + 1


def _core_signal(core, name):
    """A predicate on a signal's path: `name` in the MXU of core `core` (a lone core's, or core
    `core` of a chip)."""
    def want(full):
        parts = full.split(".")
        if parts[-1] != name or "u_mxu" not in parts:
            return False
        cores = [p for p in parts if p.startswith("g_core")]
        return not cores or re.search(rf"\b{core}\b", cores[0]) is not None
    return want


def pe_activity(path, n, core=0):
    """Live work in the PEs of an n x n array, from the VCD at path: an int8 array
    (cycles, n, n), 1 where PE (row, column) multiplies an element of a unified-buffer row in
    that cycle of the trace (the cycle's index counts from the trace's first)."""
    fire = read_signals(path, {"row_fire": _core_signal(core, "row_fire")})["row_fire"]
    live = np.zeros((len(fire), n, n), dtype=np.int8)
    for r in range(n):
        for c in range(n):
            if r + c < len(fire):
                live[r + c:, r, c] = fire[:len(fire) - r - c]
    return live
