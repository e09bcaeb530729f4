#!/usr/bin/env bash
# The malformed-input probe (issue 18): runs the fnabi CLI on truncations,
# bit flips, huge claimed sizes and deep nesting of every format it reads
# (signatures, text values, JSON, .npy, .mlir, .so, .vmfb inspected and, with
# the IREE backend, run) and fails on any panic, signal, hang (20 s) or
# error that is not one line with exit status 1. Usage: scripts/probe.sh
# [FNABI_BINARY] (default target/debug/fnabi, built if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/debug/fnabi}
[ -x "$bin" ] || cargo build -p fnabi-cli --quiet
exec python3 - "$bin" <<'PY'
import atexit, os, random, shutil, struct, subprocess, sys, tempfile
fnabi = os.path.abspath(sys.argv[1])
tmp = tempfile.mkdtemp(prefix="fnabi-probe-")
# Removed on every exit (sys.exit and an uncaught exception included).
atexit.register(shutil.rmtree, tmp, ignore_errors=True)
env = dict(os.environ, FNABI_CACHE_DIR=os.path.join(tmp, "cache"))
rng = random.Random(18)
cases = failures = 0

def probe(label, *args, stdin=b""):
    global cases, failures
    cases += 1
    try:
        p = subprocess.run([fnabi, *args], input=stdin, capture_output=True, timeout=20, env=env)
    except subprocess.TimeoutExpired:
        failures += 1
        print(f"HANG  {label}: fnabi {args!r}")
        return
    err = p.stderr.decode("utf-8", "replace")
    bad = None
    if p.returncode < 0 or p.returncode > 1:
        bad = f"exit status {p.returncode}"
    elif "panicked" in err:
        bad = "panic"
    elif p.returncode == 1:
        lines = [l for l in err.splitlines() if not l.startswith("fnabi: warning:")]
        if len(lines) != 1 or not lines[0].startswith("fnabi: error: "):
            bad = "not a one-line error"
    if bad:
        failures += 1
        print(f"FAIL  {label} ({bad}): fnabi {[a if len(a) < 200 else a[:200] + '...' for a in args]!r}\n      {err[:600]!r}")

def write(name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path

def cuts(data, n):
    return sorted({0, 1, len(data) - 1} | {rng.randrange(len(data)) for _ in range(n)})

def flips(data, n):
    for _ in range(n):
        b = bytearray(data)
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        yield i, bytes(b)

# Signatures: mangled, human, SIP.
mangled = "I18!O1!B11!d-1d128d64R17!B13!t11d32d-1d64"
for n in range(len(mangled)):
    probe("demangle cut", "demangle", mangled[:n])
for i, b in flips(mangled.encode(), 40):
    probe("demangle flip", "demangle", b.decode("latin-1"))
human = "(RefObject<?>, Buffer<float32[?x128x64]>) -> (Buffer<uint64[32x?x64]>)"
for n in range(0, len(human), 3):
    probe("mangle cut", "mangle", human[:n])
probe("mangle deep", "mangle", "(" * 100000)
probe("mangle huge dim", "mangle", "(Buffer<float32[99999999999999999999999]>) -> ()")
probe("demangle huge span", "demangle", "I999999999999!")
probe("demangle deep", "demangle", "I" + "S1!" * 30000)
probe("flatten deep", "flatten", "--sip", "I8!S5!K1!a_", "[" * 100000, stdin=b"")

# Text values through run.
mlir = "crates/fnabi/tests/mlir/memref_abi.mlir"
for t in ["100000000000xf32=1", "99999999999999999999999xf32=1", "4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4x4xf32=1",
          "4xf32=" + "[" * 10000, "4xf32=1 2 3", "4xf32=1e999 1 1 1", "4xf32=nan nan nan nan", "xf32=1", "4xq7=1",
          "4xf32=@/nonexistent.npy", "4xf32=@" + mlir]:
    probe("text value", "run", mlir, "-f", "sum_f32", "-i", t)

# JSON inputs.
for j in [b"[" * 100000, b'[{"dtype":"f32","shape":[100000000000],"data":[1]}]', b'{"$args": 5', b'["@/nonexistent.npy"]',
          b'[[1,2,3,"x"]]', b'[' + b'1,' * 10 + b']', b'\xff\xfe']:
    probe("json inputs", "run", mlir, "-f", "sum_f32", "--inputs", write("in.json", j))

# .npy: a valid file, cut, flipped, and with a huge claimed shape.
hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
hdr += b" " * (64 - 10 - len(hdr) - 1) + b"\n"
npy = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr + struct.pack("<4f", 1, 2, 3, 4)
probe("npy intact", "run", mlir, "-f", "sum_f32", "-i", "@" + write("ok.npy", npy))
for n in cuts(npy, 25):
    probe("npy cut", "run", mlir, "-f", "sum_f32", "-i", "@" + write("cut.npy", npy[:n]))
for i, b in flips(npy, 25):
    probe("npy flip", "run", mlir, "-f", "sum_f32", "-i", "@" + write("flip.npy", b))
huge_hdr = b"{'descr': '<f4', 'fortran_order': False, 'shape': (100000000000,), }"
huge_hdr += b" " * (128 - 10 - len(huge_hdr) - 1) + b"\n"
probe("npy huge shape", "run", mlir, "-f", "sum_f32", "-i",
      "@" + write("huge.npy", b"\x93NUMPY\x01\x00" + struct.pack("<H", len(huge_hdr)) + huge_hdr + b"\0" * 16))

# .mlir sources (inspect: headers only; no compile).
src = open(mlir, "rb").read()
for n in cuts(src, 20):
    probe("mlir cut", "inspect", write("cut.mlir", src[:n]))
probe("mlir deep", "inspect", write("deep.mlir", b"func.func @f(" + b"memref<" * 5000 + b"f32" + b">" * 5000 + b")"))

# Shared libraries.
so = open("fuzz/seeds/elf/mlir_module.so", "rb").read()
probe("so intact", "inspect", write("ok.so", so))
for n in cuts(so, 25):
    probe("so cut", "inspect", write("cut.so", so[:n]))
for i, b in flips(so[:0x40] + so[0x40:], 40):
    probe("so flip", "inspect", write("flip.so", b))

# .vmfb: inspected and run (when the CLI has the IREE backend).
vmfb = open("crates/fnabi/tests/fixtures/iree/add.vmfb", "rb").read()
has_iree = b"without the `iree` feature" not in subprocess.run([fnabi, "run", write("probe.vmfb", vmfb), "-f", "add", "-i", "4xf32=1", "-i", "4xf32=2"],
                                            capture_output=True, env=env).stderr
for n in cuts(vmfb, 30) + [9408]:
    p = write("cut.vmfb", vmfb[:n])
    probe("vmfb cut", "inspect", p)
    if has_iree:
        probe("vmfb cut run", "run", p, "-f", "add", "-i", "4xf32=1", "-i", "4xf32=2")
for i, b in list(flips(vmfb, 40)) + [(6108, vmfb[:6108] + bytes([vmfb[6108] ^ 0x80]) + vmfb[6109:])]:
    p = write("flip.vmfb", b)
    probe(f"vmfb flip at {i}", "inspect", p)
    if has_iree:
        probe(f"vmfb flip at {i} run", "run", p, "-f", "add", "-i", "4xf32=1", "-i", "4xf32=2")

print(f"fnabi probe: {cases} malformed inputs, {failures} failure(s){'' if has_iree else ' (CLI without IREE: .vmfb not run)'}")
sys.exit(1 if failures else 0)
PY
