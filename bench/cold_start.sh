#!/usr/bin/env bash
# Cold start of `wraith serve` on a model of more than 500 routes: the time from starting the
# process to its --ready-json file appearing (the moment it accepts connections).
#
#   bench/cold_start.sh               # release build, then RUNS (default 7) starts; prints a table
#   SKIP_BUILD=1 bench/cold_start.sh  # reuse target/release/wraith
#
# The twin is both HAR corpora of the shared folder (Linode and Mastodon) imported into one
# workspace and synthesized once (not timed): 585 routes. Run on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
CORPORA=${CORPORA:-$ROOT/../shared/corpora}
RUNS=${RUNS:-7}

if [ -z "${SKIP_BUILD:-}" ]; then
  cargo build --release --locked -p wraith
fi
WRAITH="$ROOT/target/release/wraith"
export WRAITH_HMAC_KEY=${WRAITH_HMAC_KEY:-wraith-bench-key-not-a-secret}

WORK=$(mktemp -d)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cd "$WORK"
"$WRAITH" init big --base-url https://api.linode.com >/dev/null
"$WRAITH" import big "$CORPORA"/linode/*.har >/dev/null
"$WRAITH" import big "$CORPORA"/mastodon/*.har >/dev/null
SUMMARY=$("$WRAITH" synth big 2>/dev/null | tail -1)
MODEL_BYTES=$(stat -c %s twins/big/model/twin.wir.json)

TIMES=()
for _ in $(seq 1 "$RUNS"); do
  rm -f ready.json
  START=$(date +%s%N)
  "$WRAITH" serve big --port 0 --ready-json ready.json --access-log off >/dev/null 2>&1 &
  PID=$!
  until [ -s ready.json ]; do sleep 0.001; done
  END=$(date +%s%N)
  TIMES+=($(((END - START) / 1000000)))
  kill "$PID"
  wait "$PID" 2>/dev/null || true
  PID=""
done

SORTED=$(printf '%s\n' "${TIMES[@]}" | sort -n | tr '\n' ' ')
MEDIAN=$(printf '%s\n' "${TIMES[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
cat <<EOF
| measurement | figure | target |
| --- | --- | --- |
| model | $SUMMARY; twin.wir.json $((MODEL_BYTES / 1024)) KiB | ≥ 500 routes |
| start → ready, $RUNS runs (ms, sorted) | $SORTED | |
| median start → ready | $MEDIAN ms | < 200 ms |
EOF
