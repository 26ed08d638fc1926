#!/usr/bin/env python3
"""scripts/loc.py - lines of code per part of daemon/ (make loc): every line
of the .c and .h files that is neither blank nor only a comment.  The
figures in the README come from here."""
import glob
import re
import sys


def code_lines(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return sum(1 for line in text.split("\n") if line.strip())


root = sys.argv[1] if len(sys.argv) > 1 else "daemon"
for part in ("start", "root", "asrun", "front", "filter", "common"):
    files = sorted(glob.glob(f"{root}/{part}/*.[ch]"))
    print(f"{part:8} {sum(code_lines(f) for f in files):6d}")
