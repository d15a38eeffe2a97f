"""Prints the ptxas command line that a cubin's toolkit note records
(.note.nv.tkinfo), from the cubin or from IR that embeds it."""
import re
import sys

data = open(sys.argv[1], "rb").read()
notes = sorted({m.group(0).decode().strip() for m in
                re.finditer(rb"-O [0-3] -arch sm_[0-9a-z]+[^\x00\\\"]*", data)})
if not notes:
    sys.exit(f"{sys.argv[1]}: no ptxas note")
for note in notes:
    print("ptxas:", note)
