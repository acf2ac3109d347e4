#!/usr/bin/env python3
"""The layer rule of docs/ARCHITECTURE.md, checked on the includes: every C/C++ file of a
directory includes only its own directory's headers, the layers below it, the ISA header
generated from rtl/ and io/ where allowed. Prints each include that breaks it; exits 1 if any."""
import os
import re
import sys

# Directory -> the top-level directories (besides its own) whose headers it may include.
ALLOWED = {
    "io": set(),
    "compiler": {"io"},
    "sim": {"rtl", "io"},
    "firmware": {"rtl"},
    "driver": {"rtl", "sim", "firmware"},
    "runtime": {"rtl", "driver", "compiler", "io"},
    "tools/tpusim": {"rtl", "runtime", "driver", "compiler", "io"},
    "tools/tpuc": {"compiler", "io"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def main(root):
    bad = 0
    for layer, allowed in ALLOWED.items():
        for dirpath, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".c", ".h", ".cpp")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                for inc in INCLUDE.findall(text):
                    top = inc.split("/")[0]
                    owner = "/".join(inc.split("/")[:2]) if top == "tools" else top
                    if owner != layer and top not in allowed:
                        print(f"{os.path.relpath(path, root)}: includes \"{inc}\": {layer}/ may "
                              f"use only {', '.join(sorted(allowed)) or 'itself'}")
                        bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.getcwd()))
