#!/usr/bin/env python3
"""check.py IN OUT CREDS EXAMPLES - score one filter's output against its input.

Prints one line of counts, KEY=VALUE separated by spaces:
  caught    sprinkled credentials (CREDS, one per line, "\\n" for newlines)
            of which no copy is left in OUT
  benign    input lines that `diff IN OUT` reports changed and that hold no
            sprinkled credential nor a known corpus example (EXAMPLES):
            every one of them is a false positive
  examples  changed input lines holding a known corpus example
then the benign and example lines themselves, indented, for the log.
"""
import subprocess, sys

inp, out, creds_path, ex_path = sys.argv[1:5]
creds = [l.rstrip("\n").replace("\\n", "\n") for l in open(creds_path)]
# A planted PEM block spans lines: any 8+ character line of a credential
# marks its line as planted.
parts = {p for c in creds for p in c.split("\n") if len(p) >= 8}
examples = [l.rstrip("\n") for l in open(ex_path) if l.strip() and not l.startswith("#")]
text = open(out, errors="replace").read()
caught = sum(1 for c in creds if c not in text)

d = subprocess.run(["diff", inp, out], stdout=subprocess.PIPE).stdout.decode("utf-8", "replace")
benign, ex = [], []
for line in d.split("\n"):
    if not line.startswith("< "):
        continue  # only lines of the input that did not survive unchanged
    l = line[2:]
    if any(p in l for p in parts):
        continue
    (ex if any(e in l for e in examples) else benign).append(l)
print("caught=%d benign=%d examples=%d" % (caught, len(benign), len(ex)))
for kind, lines in (("benign line changed", benign), ("corpus example", ex)):
    for l in lines[:20]:
        print("  %s: %s" % (kind, l.strip()[:150]))
