"""Two LLVM-dialect modules are the same program: equal up to the order of
top-level lines and the node names in the memory plan's peak_at."""
import re
import sys


def normalize(path):
    lines = [l for l in open(path).read().splitlines() if l.strip()]
    lines = [re.sub(r'peak_at = "[^"]*"', 'peak_at = ""', l) for l in lines]
    return sorted(lines)


a, b = normalize(sys.argv[1]), normalize(sys.argv[2])
if a != b:
    diff = [l for l in set(a) ^ set(b)][:5]
    sys.exit(f"modules differ ({len(a)} and {len(b)} lines), e.g.: {diff}")
print("same", len(a), "lines")
