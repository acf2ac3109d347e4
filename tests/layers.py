#!/usr/bin/env python3
"""The layer rule of docs/ARCHITECTURE.md, checked on the includes: every C/C++ file of a
directory includes only its own directory's headers, the layers below it, the ISA header
generated from rtl/ and io/ where allowed; and every header under them and tests/ has the guard
TPU_<PATH>_H (sim/tpusim.h: TPU_SIM_TPUSIM_H). Prints each file that breaks a rule; exits 1 if any."""
import os
import re
import sys

# Directory -> the top-level directories (besides its own) whose headers it may include.
ALLOWED = {
    "io": set(),
    "hlo": {"io"},
    "package": {"hlo", "io", "firmware"},  # the stream's flags and geometry rules
    "compiler": {"hlo", "package", "io"},
    "sim": {"rtl", "io"},
    "firmware": {"rtl"},
    "driver": {"rtl", "sim", "firmware", "io"},
    "runtime": {"rtl", "driver", "hlo", "package", "io"},
    "tools/common": {"rtl", "runtime", "driver", "hlo", "package", "io"},
    # sim/fp.h: the bf16 arithmetic tpusim gemm's own reference sums with
    "tools/tpusim": {"rtl", "runtime", "driver", "hlo", "package", "io", "tools/common", "sim"},
    "tools/tpuc": {"compiler", "hlo", "package", "io", "tools/common"},
    "tools/tpu_vp": {"rtl", "runtime", "driver", "hlo", "package", "io", "tools/common"},
    # libtpusim.so's table of the C API's layouts, for the Python package above it all
    "python": {"rtl", "compiler", "runtime", "driver", "sim", "hlo", "package", "io"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GUARD = re.compile(r"^#ifndef (\w+)\n#define (\w+)$", re.M)


def guard_errors(root, path, text):
    rel = os.path.relpath(path, root)
    want = "TPU_" + re.sub(r"[^A-Za-z0-9]", "_", rel[:-2]).upper() + "_H"
    m = GUARD.search(text)
    if not m or m.group(1) != want or m.group(2) != want:
        return [f"{rel}: its include guard must be {want}"]
    return []


def main(root):
    bad = 0
    for layer, allowed in list(ALLOWED.items()) + [("tests", None)]:
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                if name.endswith(".h"):
                    for e in guard_errors(root, path, text):
                        print(e)
                        bad += 1
                if allowed is None:
                    continue
                for inc in INCLUDE.findall(text):
                    top = inc.split("/")[0]
                    owner = "/".join(inc.split("/")[:2]) if top == "tools" else top
                    if owner != layer and top not in allowed and owner not in allowed:
                        print(f"{os.path.relpath(path, root)}: includes \"{inc}\": {layer}/ may "
                              f"use only {', '.join(sorted(allowed)) or 'itself'}")
                        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
