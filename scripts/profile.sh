#!/usr/bin/env bash
# Reproduces the Nsight Compute metrics and SASS excerpts the docs quote, for one kernel at
# one shape, on a machine with a GPU and ncu:
#
#   scripts/profile.sh KERNEL SHAPE [--dtype T] [--transpose-a] [--transpose-b] [--out DIR]
#                      [--bin DIR] [--locked-clocks]
#
# KERNEL is a registry name (`gemmkit list`), SHAPE MxNxK or N for N^3. It runs
# `gemmkit bench --kernels KERNEL --shapes SHAPE --reps 1 --warmup 0` under ncu, so the
# reference library's kernel of the same run (cuBLAS) is profiled beside ours, and prints,
# per kernel function launched: duration and SM clock; SM active cycles (min/avg/max over
# the SMs: the tail of the last wave); DRAM bytes read, L2 hit rate, L2 read sectors and
# sectors between the two L2 halves (`ltcfabric`); shared-memory bank conflicts; warps per
# scheduler, issue-slot and FMA-pipe use; registers, grid, block and shared memory per
# block. Then, for each of our kernel functions, it writes the function's whole SASS
# (cuobjdump) to DIR/<n>.sass and DIR/sass_excerpt.txt: the opcode histogram and the lines
# of the instructions the docs name (HGMMA, HMMA, IMMA, LDSM, LDGSTS, UTMALDG, UTMASTG,
# USETMAXREG, SYNCS, FFMA, LDS.128 ...).
#
# ncu runs with --clock-control none (the GPU's own clocks, as the bench sees them);
# --locked-clocks leaves ncu's default (base clocks). DIR defaults to profile_<KERNEL>_<SHAPE>.
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2; }
die() { echo "profile.sh: $*" >&2; exit 2; }

[[ $# -ge 2 ]] || usage
kernel=$1 shape=$2
shift 2
dtype="" out="" bin="${GEMMKIT_BIN_DIR:-}" clock=(--clock-control none) layout=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --dtype) [[ $# -ge 2 ]] || die "--dtype needs a value"; dtype=$2; shift 2 ;;
    --out) [[ $# -ge 2 ]] || die "--out needs a folder"; out=$2; shift 2 ;;
    --bin) [[ $# -ge 2 ]] || die "--bin needs a folder"; bin=$2; shift 2 ;;
    --transpose-a | --transpose-b) layout+=("$1"); shift ;;
    --locked-clocks) clock=(); shift ;;
    -h | --help) usage ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ $shape =~ ^[0-9]+(x[0-9]+x[0-9]+)?$ ]] || die "SHAPE '$shape' is not MxNxK or N"
[[ $shape == *x* ]] || shape="${shape}x${shape}x${shape}"

root=$(cd "$(dirname "$0")/.." && pwd)
[[ -n $bin ]] || bin="$root/build/release/bin"
gemmkit="$bin/gemmkit"
[[ -x $gemmkit ]] || die "no gemmkit at $gemmkit (build it, or give --bin DIR / GEMMKIT_BIN_DIR)"

# The GPU machine's tools: say so plainly where they are missing.
command -v ncu >/dev/null || die "ncu (Nsight Compute) is not on PATH: this needs the GPU machine with the CUDA toolkit's ncu"
command -v cuobjdump >/dev/null || die "cuobjdump is not on PATH: it comes with the CUDA toolkit"
command -v python3 >/dev/null || die "python3 is needed to read ncu's CSV"
if ! nvidia-smi -L >/dev/null 2>&1; then
  die "no NVIDIA GPU here (nvidia-smi -L failed): the metrics are measured on the device"
fi

out=${out:-profile_${kernel}_${shape}}
mkdir -p "$out"

metrics=(
  gpu__time_duration.sum sm__cycles_elapsed.avg.per_second
  sm__cycles_active.min sm__cycles_active.avg sm__cycles_active.max
  dram__bytes_read.sum lts__t_sector_hit_rate.pct
  lts__t_sectors_srcunit_tex_op_read.sum lts__t_sectors_srcunit_ltcfabric.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum
  l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  smsp__warps_active.avg.per_cycle_active smsp__warps_eligible.avg.per_cycle_active
  smsp__issue_active.avg.pct_of_peak_sustained_active
  sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active
  sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active
  launch__registers_per_thread launch__grid_size launch__block_size
  launch__shared_mem_per_block_static launch__shared_mem_per_block_dynamic
)
# Keep the metrics this ncu and GPU know (names differ between versions and chips), so one
# unknown name does not fail the run; say which were left out.
ncu --query-metrics >"$out/ncu_query.txt" 2>&1 || die "ncu --query-metrics failed: $(tail -1 "$out/ncu_query.txt")"
known=() missing=()
for m in "${metrics[@]}"; do
  if [[ $m == launch__* ]] || grep -qE "(^|[[:space:]])${m%%.*}([[:space:]]|$)" "$out/ncu_query.txt"; then
    known+=("$m")
  else
    missing+=("$m")
  fi
done
if [[ ${#missing[@]} -gt 0 && ${#known[@]} -gt 5 ]]; then
  echo "profile.sh: this ncu does not know ${missing[*]}: left out" >&2
elif [[ ${#missing[@]} -gt 0 ]]; then
  known=("${metrics[@]}")  # its list did not parse as expected: ask for them all
fi
metric_list=$(IFS=,; echo "${known[*]}")

# Under ncu every launch is replayed, so the bench's estimate of a run's time (from a probe on
# a smaller shape) would skip the shape: its limits are lifted.
cmd=("$gemmkit" bench --backend cuda --kernels "$kernel" --shapes "$shape" --reps 1 --warmup 0
     --max-seconds 1e6 --max-run-seconds 1e6 ${dtype:+--dtype "$dtype"} "${layout[@]}")
echo "profile.sh: ncu ${clock[*]} --metrics ... ${cmd[*]}" | tee "$out/command.txt"
ncu "${clock[@]}" --print-kernel-base mangled --csv --metrics "$metric_list" "${cmd[@]}" \
  >"$out/ncu.csv" 2>"$out/ncu.log" || { tail -5 "$out/ncu.log" >&2; die "ncu failed (log: $out/ncu.log)"; }

# One block per kernel function and launch shape (grid, block), the longest first: the
# product of SHAPE is the largest grid of its function; the bench's probe of a smaller
# shape (its first launches) comes after it. Repeated launches: the last one's values.
python3 - "$out" "$gemmkit" <<'PY'
import csv, io, subprocess, sys, re, collections, pathlib
out, gemmkit = pathlib.Path(sys.argv[1]), sys.argv[2]
text = (out / "ncu.csv").read_text()
start = text.find('"ID"')
if start < 0:
    sys.exit("profile.sh: ncu wrote no metrics (see ncu.log); did the bench launch the kernel?")
rows = list(csv.DictReader(io.StringIO(text[start:])))
groups = collections.OrderedDict()  # (name, grid, block) -> {metric: (value, unit)}
launches = collections.Counter()
for r in rows:
    key = (r["Kernel Name"], r["Grid Size"], r["Block Size"])
    groups.setdefault(key, {})[r["Metric Name"]] = (r["Metric Value"], r["Metric Unit"])
    launches[key] += r["Metric Name"] == "gpu__time_duration.sum"
def duration(ms):
    v, unit = ms.get("gpu__time_duration.sum", ("0", "ns"))
    scale = {"ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3}.get(unit, 1)
    return float(v.replace(",", "") or 0) * scale
per = collections.OrderedDict()  # name -> functions, for the SASS
for (name, _, _) in groups:
    per.setdefault(name, None)
def demangle(name):
    try:
        return subprocess.run(["c++filt"], input=name, capture_output=True, text=True).stdout.strip()
    except OSError:
        return name
report = []
for (name, grid, block), ms in sorted(groups.items(), key=lambda kv: (list(per).index(kv[0][0]), -duration(kv[1]))):
    report.append(f"== {demangle(name)[:200]}\n   grid {grid}, block {block}, {launches[(name, grid, block)]} launch(es)")
    for m, (v, u) in ms.items():
        report.append(f"  {m:<62} {v} {u}")
(out / "metrics.txt").write_text("\n".join(report) + "\n")
print("\n".join(report))
# SASS of our functions: cuobjdump knows only the ones in the gemmkit binary (cuBLAS's live
# in its own library), and names each by its mangled name.
key = re.compile(r"\b(HGMMA|HMMA|IMMA|LDSM|LDGSTS|UTMALDG|UTMASTG|UTMACMDFLUSH|USETMAXREG|SYNCS|FFMA|DFMA|LDS\.128|STS\.128|LDG\.E\.128|BAR|WARPGROUP)[.\w]*")
excerpt = []
for i, name in enumerate(per):
    sass = subprocess.run(["cuobjdump", "-sass", "-fun", name, gemmkit], capture_output=True, text=True)
    lines = [l for l in sass.stdout.splitlines() if re.search(r"/\*[0-9a-f]{4,}\*/", l)]
    if sass.returncode != 0 or not lines:
        continue
    path = out / f"{i}.sass"
    path.write_text(sass.stdout)
    ops = collections.Counter()
    for l in lines:
        m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Za-z0-9_.]*)", l)
        if m:
            ops[m.group(1)] += 1
    excerpt.append(f"== {demangle(name)[:200]}  ({path.name}: {len(lines)} instructions)")
    excerpt.append("  opcodes: " + ", ".join(f"{op} {n}" for op, n in ops.most_common(25)))
    shown = collections.Counter()
    for l in lines:
        m = key.search(l)
        if m and shown[m.group(1)] < 4:
            shown[m.group(1)] += 1
            excerpt.append("  " + re.sub(r"\s+", " ", l.strip()))
(out / "sass_excerpt.txt").write_text("\n".join(excerpt) + "\n")
print(f"\nprofile.sh: metrics in {out}/metrics.txt, SASS excerpt in {out}/sass_excerpt.txt" +
      ("" if excerpt else " (no function of the gemmkit binary was profiled: only library kernels ran)"))
PY
