"""C++ / fnabi ratios of the signature timings in DIR (issue 19, P6).

Reads DIR/cpp_I.txt and DIR/rust_I.txt for I in 1..ROUNDS (lines
`operation/signature ns`, written by bench/iree-signature/driver.cc and the
`signature_timing` example of fnabi-abi), takes the median of each side per
row and prints C++ ns, fnabi ns and their ratio, then the same as one line
of JSON. `sip_parse_floor` is derived, not timed: fnabi's SIP visit plus
`sip_alloc` (only the allocations of a parse that allocates once per list),
run one after the other; its ratio estimates the most such an owned parse
can reach (overlap inside the CPU could hide a part of the allocations).
`raw_alloc` (the owned raw parse's two lists) has no floor row: the owned
raw parse reads and allocates in one pass, and beats the sum on some rows.

Usage: python3 scripts/lib/signature_ratios.py DIR ROUNDS
"""

import json
import os
import statistics
import sys

# Rows without an operation of their own in the reference compare with the nearest one.
ANCHOR = {
    "raw_parse": "raw_read",
    "raw_human_zero_copy": "raw_human",
    "sip_parse": "sip_visit",
    "sip_clone": "sip_visit",
    "sip_alloc": "sip_visit",
    "sip_parse_floor": "sip_visit",
    "raw_alloc": "raw_read",
}


def medians(out, side, rounds):
    runs = {}
    for i in range(1, rounds + 1):
        with open(f"{out}/{side}_{i}.txt") as f:
            for line in f:
                key, ns = line.split()
                runs.setdefault(key, []).append(float(ns))
    return {k: statistics.median(v) for k, v in runs.items()}


def cpu_model(out):
    for path in (f"{out}/cpu.txt", "/proc/cpuinfo"):
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    if line.lower().startswith("model name"):
                        return line.split(":", 1)[1].strip()
    return "unknown"


def main():
    out, rounds = sys.argv[1], int(sys.argv[2])
    cpp, rust = medians(out, "cpp", rounds), medians(out, "rust", rounds)
    for key in [k for k in rust if k.startswith("sip_alloc/")]:
        name = key.split("/", 1)[1]
        if f"sip_visit/{name}" in rust:
            rust[f"sip_parse_floor/{name}"] = rust[f"sip_visit/{name}"] + rust[key]
    cpu = cpu_model(out)
    rows = []
    print(f"CPU: {cpu}; median of {rounds} alternated runs")
    print(f"{'operation/signature':30} {'C++ ns':>9} {'fnabi ns':>9} {'C++/fnabi':>10}")
    for key, ns in rust.items():
        op, name = key.split("/", 1)
        ref = f"{ANCHOR.get(op, op)}/{name}"
        if ref not in cpp:
            continue
        ratio = cpp[ref] / ns
        rows.append({"id": key, "reference": ref, "cpp_ns": cpp[ref], "fnabi_ns": ns, "ratio": round(ratio, 2)})
        print(f"{key:30} {cpp[ref]:9.1f} {ns:9.1f} {ratio:9.2f}x")
    print(json.dumps({"cpu": cpu, "rounds": rounds, "rows": rows}))


if __name__ == "__main__":
    main()
