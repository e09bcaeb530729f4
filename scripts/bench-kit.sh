#!/usr/bin/env bash
# A self-contained kit of issue 19's CPU benchmarks, for a machine that has
# no compilers (another CPU kind, say): IREE's C++ signature parser (linked
# statically), fnabi's `signature_timing` example, the `layout` and `text`
# bench binaries, the signature list, and run.sh, which times them there.
# Not in the kit: the `call` bench (P2), whose MLIR libraries are compiled
# for the CPU at run time, and the `iree` bench (its modules likewise).
#
# Usage: scripts/bench-kit.sh [build [KIT]]   builds KIT (default target/bench-kit)
#        KIT/run.sh OUT [ROUNDS]             on the other machine: timings into OUT
#        scripts/bench-kit.sh report OUT     here: ratios (signature C++/fnabi,
#                                            transpose/memcpy) with OUT's CPU
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-build}

if [ "$mode" = report ]; then
  out=${2:?usage: scripts/bench-kit.sh report OUT}
  rounds=$(find "$out" -maxdepth 1 -name 'rust_*.txt' | wc -l)
  python3 scripts/lib/signature_ratios.py "$out" "$rounds"
  python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
unit = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
times = {}
for name in ("layout.txt", "text.txt"):
    try:
        lines = open(f"{out}/{name}").read().splitlines()
    except FileNotFoundError:
        continue
    last = None
    for line in lines:
        m = re.match(r"^(\S+)\s*(time:.*)?$", line)
        if m and not line.startswith(" ") and "/" in m.group(1):
            last = m.group(1)
        t = re.search(r"time:\s+\[\S+ \S+ (\S+) (\S+) \S+ \S+\]", line)
        if t and last:
            times.setdefault(last, []).append(float(t.group(1)) * unit[t.group(2)])
for k, v in times.items():
    print(f"{k:28} " + " ".join(f"{x * 1e6:10.1f} µs" for x in v))
for size in ("1024", "4096"):
    m, t = times.get(f"memcpy/{size}"), times.get(f"transpose/{size}")
    if m and t:
        ratios = [a / b for a, b in zip(m, t)]
        print(f"transpose/{size} / memcpy/{size}: " + ", ".join(f"{r:.0%}" for r in ratios) + " (per run)")
try:
    paired = open(f"{out}/paired.txt").read().splitlines()
except FileNotFoundError:
    paired = []
if paired:
    print("in alternated rounds (median [min, max], one line per run):")
    for line in paired:
        print(line)
PY
  exit 0
fi

kit=${2:-target/bench-kit}
. scripts/lib/deps.sh
apt_install g++ libabsl-dev
mkdir -p "$kit"
lib=$(dirname "$(find /usr/lib -name 'libabsl_strings.a' -print -quit)")
g++ -O2 -std=c++17 -Wall -static -o "$kit/driver" bench/iree-signature/driver.cc bench/iree-signature/signature_parser.cc \
  "$lib/libabsl_strings.a" "$lib/libabsl_int128.a" "$lib/libabsl_throw_delegate.a" "$lib/libabsl_raw_logging_internal.a"
cargo build --quiet --release --locked -p fnabi-abi --example signature_timing
cp target/release/examples/signature_timing "$kit/"
"$kit/signature_timing" --list > "$kit/signatures.txt"
for bench in layout text; do
  bin=$(cargo bench --locked -p fnabi --bench "$bench" --no-run --message-format=json 2>/dev/null \
    | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -n 1)
  [ -n "$bin" ] || { echo "fnabi: could not build the $bench bench" >&2; exit 1; }
  cp "$bin" "$kit/$bench"
done
cat > "$kit/run.sh" <<'RUN'
#!/usr/bin/env bash
# Times the kit on this machine into OUT (see scripts/bench-kit.sh).
set -euo pipefail
out=$(realpath -m "${1:?usage: run.sh OUT [ROUNDS]}")
rounds=${2:-3}
cd "$(dirname "$0")"
mkdir -p "$out"
# One core, the last, for every timing (when taskset is there).
pin=()
command -v taskset >/dev/null && pin=(taskset -c "$(($(nproc) - 1))")
lscpu > "$out/cpu.txt" 2>/dev/null || grep -m1 "model name" /proc/cpuinfo > "$out/cpu.txt"
for i in $(seq "$rounds"); do
  "${pin[@]}" ./driver signatures.txt / | awk '{print $1, $2}' > "$out/cpp_$i.txt"
  "${pin[@]}" ./signature_timing / > "$out/rust_$i.txt"
done
export CRITERION_HOME=$out/criterion
for i in $(seq "$rounds"); do
  "${pin[@]}" ./layout --bench '^(memcpy|transpose)/(1024|4096)$' --warm-up-time 1 --measurement-time 3 2>&1 \
    | tee >(grep -E "% of memcpy/" >> "$out/paired.txt") \
    | grep -E -B1 "^ *time:|^[a-z].* time:" | grep -v "^--" >> "$out/layout.txt"
done
"${pin[@]}" ./text --bench '^(format|parse|memcpy)/(f32_1M|text_f32_1M)$' --warm-up-time 1 --measurement-time 3 2>&1 \
  | grep -E -B1 "^ *time:|^[a-z].* time:" | grep -v "^--" > "$out/text.txt"
rm -rf "$out/criterion"
echo "timings in $out: copy it back and run scripts/bench-kit.sh report OUT"
RUN
chmod +x "$kit/run.sh"
du -sh "$kit"
echo "kit in $kit: copy it to the other machine and run $kit/run.sh OUT there"
