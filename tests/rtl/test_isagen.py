#!/usr/bin/env python3
"""rtl/tpu_isagen.py: the table generates, a broken table fails naming the entry, and
--check-doc finds docs/isa.md's tables in agreement with it, and a broken page not.

usage: test_isagen.py <repo root>
Each case edits the text of rtl/tpu_isa.toml (or docs/isa.md) and runs the generator on the copy.
"""

import os
import subprocess
import sys
import tempfile
import unittest

ROOT = None


class IsaGen(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "rtl", "tpu_isa.toml"), encoding="utf-8") as f:
            self.table = f.read()
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def run_gen(self, table):
        path = os.path.join(self.tmp.name, "tpu_isa.toml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(table)
        out = os.path.join(self.tmp.name, "out")
        p = subprocess.run([sys.executable, os.path.join(ROOT, "rtl", "tpu_isagen.py"), path, out],
                           capture_output=True, text=True)
        return p, out

    def edited(self, old, new):
        self.assertIn(old, self.table)
        return self.table.replace(old, new, 1)

    def fails(self, table, *words):
        p, out = self.run_gen(table)
        self.assertEqual(p.returncode, 1, p.stderr)
        for w in words:
            self.assertIn(w, p.stderr)
        self.assertFalse(os.path.exists(out), "a bad table wrote outputs")

    def test_generates_and_leaves_unchanged_outputs_alone(self):
        p, out = self.run_gen(self.table)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(os.path.join(out, "tpu_isa.vh"), encoding="utf-8") as f:
            vh = f.read()
        with open(os.path.join(out, "tpu_isa.h"), encoding="utf-8") as f:
            h = f.read()
        self.assertIn("`define TPU_OP_MATMUL 8'h04\n", vh)
        self.assertIn("`define TPU_INSN_B 83:64\n", vh)
        self.assertIn("`define TPU_F_SRC_ACC_BIT 5\n", vh)
        self.assertIn("`define TPU_FAULT_WFIFO_FULL 4'd8\n", vh)
        self.assertIn("`define TPU_CSR_INSN_COUNT 8'h3c\n", vh)
        self.assertIn("`define TPU_PERF_COUNT 10\n", vh)
        self.assertIn("TPU_OP_MATMUL = 0x04,", h)
        self.assertIn("#define TPU_OP_WR_HOST_FLAGS 0xb8u\n", h)
        self.assertIn("#define TPU_INSN_LEN_SHIFT 20\n", h)
        self.assertIn("#define TPU_STATUS_ERROR (1u << 2)", h)
        self.assertIn("X(MXU_BUSY, \"mxu_busy\")", h)
        self.assertIn("`define TPU_CHIP_CSR_BAR_GEN 8'h18\n", vh)
        self.assertIn("`define TPU_CHIP_CTRL_CLEAR_PERF_BIT 1\n", vh)
        self.assertIn("TPU_CHIP_CSR_MEM_STALL = 0x40,", h)
        self.assertIn("#define TPU_CHIP_ID_MAGIC 0x54505543u\n", h)
        self.assertIn("X(MATMUL, UB, 0, (flags & TPU_F_BF16), a, rows, TPU_FOOTPRINT_NZ(stride), 2)", h)
        self.assertIn("X(WR_HOST, PARAMS, 0, (flags & TPU_F_SRC_ACC) && (flags & TPU_F_BIAS), ", h)
        self.assertIn("X(UB, UB_ROWS, UB_RANGE)", h)
        with open(os.path.join(out, "tpu_footprint.vh"), encoding="utf-8") as f:
            fp = f.read()
        self.assertIn("function [127:0] tpu_hull(", fp)
        self.assertIn("size = (ph - 64'd1) * pitch + pw;", fp)
        mtime = os.stat(os.path.join(out, "tpu_isa.h")).st_mtime_ns
        os.utime(os.path.join(out, "tpu_isa.h"), ns=(mtime - 10**9, mtime - 10**9))
        self.assertEqual(self.run_gen(self.table)[0].returncode, 0)
        self.assertEqual(os.stat(os.path.join(out, "tpu_isa.h")).st_mtime_ns, mtime - 10**9)

    def test_overlapping_fields(self):
        self.fails(self.edited('bits = "83:64"', 'bits = "84:64"'),
                   "insn.field 'len'", "bit 84 already used by insn.field 'b'")

    def test_uncovered_bits(self):
        self.fails(self.edited('bits = "95:84"', 'bits = "95:85"'), "bit 84 is in no field")

    def test_field_across_words(self):
        table = self.edited('bits = "95:84"', 'bits = "99:84"')
        table = table.replace('bits = "127:96"', 'bits = "127:100"', 1)
        self.fails(table, "insn.field 'len'", "cross a 32-bit word")

    def test_duplicate_opcode_value(self):
        self.fails(self.edited("value = 0x08", "value = 0x07"),
                   "opcode 'HALT'", "value 0x07 already used by opcode 'SYNC'")

    def test_opcode_zero(self):
        self.fails(self.edited("value = 0x01", "value = 0x00"), "opcode 'RD_HOST' value")

    def test_duplicate_name(self):
        self.fails(self.edited('name = "HALT"', 'name = "SYNC"'), "opcode #8", "duplicate name 'SYNC'")

    def test_bad_identifier(self):
        self.fails(self.edited('name = "MATMUL"', 'name = "MAT-MUL"'),
                   "opcode #4", "'MAT-MUL' is not an upper-case identifier")
        self.fails(self.edited('name = "mxu_busy"', 'name = "mxu busy"'),
                   "perf.counter #2", "'mxu busy' is not a lower-case identifier")

    def test_flag_bit_taken(self):
        self.fails(self.edited("bit = 4\n", "bit = 3\n"),
                   "flag 'RELU'", "bit 3 already used by flag 'BIAS'")

    def test_flag_of_unknown_opcode(self):
        self.fails(self.edited('opcodes = ["WR_HOST"]', 'opcodes = ["WR_HOSTS"]'),
                   "flag 'SRC_ACC'", "no opcode named 'WR_HOSTS'")

    def test_fault_value_too_wide(self):
        self.fails(self.edited("value = 8\n", "value = 16\n"), "fault.code 'WFIFO_FULL' value")

    def test_csr_offset_taken_and_unaligned(self):
        self.fails(self.edited("offset = 0x3C", "offset = 0x38"),
                   "csr.reg 'INSN_COUNT'", "offset 0x38 already used by csr.reg 'IQ_FREE'")
        self.fails(self.edited("offset = 0x3C", "offset = 0x3E"),
                   "csr.reg 'INSN_COUNT'", "multiple of 4")

    def test_counters_overlap_a_csr(self):
        self.fails(self.edited("offset = 0x3C", "offset = 0x48"),
                   "perf.counter 'mxu_busy'", "offset 0x48 already used by csr.reg 'INSN_COUNT'")

    def test_chip_registers(self):
        self.fails(self.edited("offset = 0x18\naccess = \"R\"\ndescription = \"barrier",
                               "offset = 0x10\naccess = \"R\"\ndescription = \"barrier"),
                   "chip.reg 'BAR_GEN'", "offset 0x10 already used by chip.reg 'BAR_MASK'")
        self.fails(self.edited("mem_stall = 0x40", "mem_stall = 0x10"),
                   "chip.mem_stall", "offset 0x10 already used by chip.reg 'BAR_MASK'")
        self.fails(self.edited("cores_max = 8", "cores_max = 40"),
                   "chip.mem_stall", "past the 8-bit CSR space")

    def test_footprints(self):
        matmul = '{ space = "ub", first = "a", count = "rows", step = "nz(stride)", when = "!BF16" }'
        self.fails(self.edited(matmul, matmul.replace('"ub"', '"ubb"')),
                   "opcode 'MATMUL' reads #1", "no space named 'ubb'")
        self.fails(self.edited(matmul, matmul.replace("nz(stride)", "nz(strides)")),
                   "opcode 'MATMUL' reads #1 step", "unknown name 'strides'")
        self.fails(self.edited(matmul, matmul.replace("nz(stride)", "ceil(stride)")),
                   "ceil takes 2 argument(s)")
        self.fails(self.edited(matmul, matmul.replace("nz(stride)", "stride +")),
                   "expected more, found the end")
        self.fails(self.edited('when = "ACC" }', 'when = "POOL" }'),
                   "opcode 'MATMUL' reads #3", "'POOL' is not a flag the opcode takes")
        self.fails(self.edited(', when = "!POOL" }', " }"),
                   "opcode 'ACTIVATE' reads #2", "may hold together with opcode 'ACTIVATE' reads #1")
        self.fails(self.edited('limit = "ACC_ROWS"', 'limit = "ACC_ROW"'),
                   "space 'acc'", "limit 'ACC_ROW' is not a CSR")

    def check_doc(self, doc):
        path = os.path.join(self.tmp.name, "isa.md")
        with open(path, "w", encoding="utf-8") as f:
            f.write(doc)
        return subprocess.run([sys.executable, os.path.join(ROOT, "rtl", "tpu_isagen.py"),
                               "--check-doc", path, os.path.join(ROOT, "rtl", "tpu_isa.toml")],
                              capture_output=True, text=True)

    def test_doc_tables(self):
        with open(os.path.join(ROOT, "docs", "isa.md"), encoding="utf-8") as f:
            doc = f.read()
        p = self.check_doc(doc)
        self.assertEqual(p.returncode, 0, p.stderr)
        for old, new, words in [
                ("| 0x30 | `SYNC_COUNT` | R |", "| 0x34 | `SYNC_COUNT` | R |",
                 ["registers: expected 0x30 | `SYNC_COUNT` | R, found 0x34"]),
                ("| 0x18 | `BAR_GEN` | R |", "| 0x18 | `BAR_GEN` | RW |", ["chip registers"]),
                ("| 8 | `WFIFO_FULL` |", "| 9 | `WFIFO_FULL` |", ["faults: expected 8"]),
                ("`POOL`=bit6", "`POOL`=bit7", ["flags: expected", "Flags: "]),
                ("| w2 | 19:0 | `b` |", "| w2 | 20:0 | `b` |", ["instruction fields"]),
                ("0x54505543 (\"TPUC\")", "0x54505542", ["CHIP_ID must read 0x54505543"]),
                ("| `ZERO` | none | `ub [b, +rows)` |", "| `ZERO` | none | `ub [b, +rows + 1)` |",
                 ["footprints: expected `ZERO` | none | `ub [b, +rows)`"]),
                ("| 0x88 | `PERF_RETIRED` |", "| 0x90 | `PERF_RETIRED` |",
                 ["performance counters"])]:
            self.assertIn(old, doc)
            p = self.check_doc(doc.replace(old, new, 1))
            self.assertEqual(p.returncode, 1, old)
            # The line named: the row's, or the sentence's the last word starts.
            at = words.pop() if words[-1] == "Flags: " else old
            line = doc[:doc.index(at)].count("\n") + 1
            for w in words + [f"isa.md:{line}:"]:
                self.assertIn(w, p.stderr)

    def test_generated_names_collide(self):
        table = self.table + '[[opcode]]\nname = "MATMUL_FLAGS"\nvalue = 0x0B\ndescription = "x"\n'
        self.fails(table, "opcode 'MATMUL_FLAGS'", "generates TPU_OP_MATMUL_FLAGS",
                   "as does opcode 'MATMUL'")

    def test_unknown_key_and_wrong_type(self):
        self.fails(self.edited("value = 0x04", "valeu = 0x04"), "opcode #4: missing 'value'")
        self.fails(self.edited("value = 0x04", "value = true"), "opcode 'MATMUL' value")


if __name__ == "__main__":
    ROOT = sys.argv.pop(1)
    unittest.main()
