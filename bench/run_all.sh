#!/usr/bin/env bash
# Every benchmark, then the plots and the generated tables of docs/benchmarks.md.
#
#   bash bench/run_all.sh            # full run (about an hour on 2 cores)
#   QUICK=1 bash bench/run_all.sh    # smoke run: 2 LoCoMo conversations, scale 1e3-1e4
#   SKIP="pg-compare capture" bash bench/run_all.sh   # leave some out (names as printed)
#
# The benchmarks run on a snapshot of src/ and bench/ taken at the start, so that
# every figure of one run is of one source state even while the checkout changes.
# Each benchmark writes JSON under bench/results/ and this script keeps a .txt copy of
# what it printed. A failing benchmark is reported and the others still run; the exit
# status is non-zero if any failed. Benchmarks are never run as timed tests.
set -uo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
PY=${PYTHON:-$REPO/.venv/bin/python}
OUT=$REPO/bench/results
DOCS=$REPO/docs
DATE=$(date +%F)
LOCOMO=${CONVMEM_LOCOMO:-$REPO/../shared/data/locomo/locomo10.json}
mkdir -p "$OUT"
failed=()

SNAP=$(mktemp -d "${TMPDIR:-/tmp}/convmem-bench-XXXXXX")
trap 'rm -rf "$SNAP"' EXIT
cp -r src bench "$SNAP"/
[[ -d tests ]] && cp -r tests "$SNAP"/ # bench/pg_compare.py starts tests/pg_server.py
export PYTHONPATH="$SNAP/src" CONVMEM_BENCH_REPO="$REPO"
cd "$SNAP"

run() { # run NAME TXT CMD... : run a benchmark, tee its output to TXT
    local name=$1 txt=$2
    shift 2
    if [[ " ${SKIP:-} " == *" $name "* ]]; then
        echo "=== $name skipped (SKIP)"
        return
    fi
    echo "=== $name: $*"
    local start=$SECONDS
    if "$@" 2>&1 | tee "$txt"; then
        echo "=== $name done in $((SECONDS - start)) s"
    else
        echo "=== $name FAILED (see $txt)"
        failed+=("$name")
    fi
}

"$PY" -c 'import sys; sys.path[:0] = ["bench"]; import scale; print(scale.machine_line(scale.machine()))'
"$PY" -c 'import sys; sys.path[:0] = ["bench"]; import scale; print("source:", scale.source_state())'

if [[ -n "${QUICK:-}" ]]; then
    run locomo "$OUT/locomo-$DATE.txt" "$PY" bench/locomo.py --systems bm25,convmem,convmem-project \
        --limit-convs 2 --data "$LOCOMO" --json-out "$OUT/locomo-$DATE.json"
    run scale "$SNAP/scale.log" "$PY" bench/scale.py --sizes 1e3,1e4 --out "$OUT"
else
    run locomo "$OUT/locomo-$DATE.txt" "$PY" bench/locomo.py --systems bm25,convmem,convmem-project \
        --data "$LOCOMO" --json-out "$OUT/locomo-$DATE.json"
    run scale "$SNAP/scale.log" "$PY" bench/scale.py --out "$OUT"
fi
# extraction against the labelled set (both splits) and CrossWOZ
run extraction "$OUT/extraction.txt" "$PY" bench/extraction.py --heldout --out "$OUT" --date "$DATE"
# links on conversations written apart from the code, and replaying LoCoMo
run links "$OUT/links.txt" "$PY" bench/links.py --out "$OUT" --date "$DATE" --locomo "$LOCOMO"
# Chinese names asked about late in CrossWOZ replayed as one session
run zh-recall "$SNAP/zh-recall.log" "$PY" bench/zh_recall.py --out "$OUT" --date "$DATE"
# smaller runs of the other benchmarks under QUICK (their defaults otherwise)
small() { [[ -n "${QUICK:-}" ]] && echo "$@"; }
# shellcheck disable=SC2046
run capture "$OUT/capture.txt" "$PY" bench/capture.py --out "$OUT" $(small --events 10000)
# shellcheck disable=SC2046
[[ -f bench/hook_latency.py ]] && run hook-latency "$OUT/hook-latency.txt" \
    "$PY" bench/hook_latency.py --out "$OUT" $(small --runs 5)
# shellcheck disable=SC2046
[[ -f bench/dsh_roundtrip.py ]] && run dsh-roundtrip "$OUT/dsh-roundtrip.txt" \
    "$PY" bench/dsh_roundtrip.py --out "$OUT" $(small --steps 100)
# the issue's DSH target is at a 1e4-event session
# shellcheck disable=SC2046
[[ -f bench/dsh_roundtrip.py ]] && run dsh-roundtrip-1e4 "$OUT/dsh-roundtrip-1e4.txt" \
    "$PY" bench/dsh_roundtrip.py --out "$OUT" --events 10000 --name dsh-roundtrip-1e4 \
    $(small --steps 100 || echo --steps 300)
# the real hosts over 40 scripted turns (needs .ci/install-hosts.sh)
[[ -f bench/host_pileup.py ]] && run host-pileup "$OUT/host-pileup.txt" \
    "$PY" bench/host_pileup.py --out "$OUT"
# shellcheck disable=SC2046
[[ -f bench/token_meter.py ]] && run token-meter "$OUT/token-meter.txt" \
    "$PY" -m bench.token_meter --json "$OUT/token-meter.json"

[[ -f bench/pg_compare.py ]] && run pg-compare "$OUT/pg-compare.txt" \
    "$PY" bench/pg_compare.py --out "$OUT" $(small --sizes 1e3 --queries 20)

# shellcheck disable=SC2046
[[ -f bench/ui_pages.py ]] && run ui-pages "$SNAP/ui-pages.log" \
    "$PY" bench/ui_pages.py --out "$OUT" $(small --events 1e4 --repeat 5)

run plots "$OUT/plots.txt" "$PY" bench/plots.py --results "$OUT" --docs "$DOCS"

if ((${#failed[@]})); then
    echo "failed: ${failed[*]}"
    exit 1
fi
echo "all benchmarks done; docs/benchmarks.md and docs/*.png regenerated"
