#!/usr/bin/env python3
"""memgrep.py PID NEEDLE...: how many times each needle occurs in the
process's writable and anonymous memory (read as root through /proc/PID/mem).
Prints one line per needle: "<count> <needle>"."""
import re
import sys

pid, needles = sys.argv[1], [n.encode() for n in sys.argv[2:]]
counts = dict.fromkeys(needles, 0)
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)", line)
        start, end, perms, name = int(m[1], 16), int(m[2], 16), m[3], m[4]
        # Writable data, heap, stack and anonymous maps; not file text, not [vvar].
        if "r" not in perms or name in ("[vvar]", "[vsyscall]", "[vdso]"):
            continue
        if "w" not in perms and name:
            continue
        try:
            mem.seek(start)
            data = mem.read(end - start)
        except OSError:
            continue
        for n in needles:
            counts[n] += data.count(n)
for n in needles:
    print(counts[n], n.decode())
