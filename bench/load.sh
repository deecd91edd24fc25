#!/usr/bin/env bash
# HTTP load figures for `wraith serve`, against a bare hyper server measured in the same run.
#
#   bench/load.sh            # release build, then every measurement; prints a Markdown table
#   DURATION=5s bench/load.sh
#   SKIP_BUILD=1 bench/load.sh   # reuse target/release/{wraith,examples/bare_hyper}
#
# Run it on an otherwise idle machine: the load generator and the servers share its cores, and
# any other work on them shows up in the figures. Everything runs on 127.0.0.1 only, every run is bounded in time, and both servers are stopped
# at the end. Needs oha (installed with `cargo install --locked oha` when missing), wrk (Debian
# package, installed with apt-get when missing), curl and python3.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
SESSIONS_RSS=${SESSIONS_RSS:-1000}
FIXTURE_ENTITIES=${FIXTURE_ENTITIES:-100}

command -v oha >/dev/null || cargo install --locked oha
command -v wrk >/dev/null || { apt-get install -y wrk >/dev/null; }
command -v curl >/dev/null && command -v python3 >/dev/null

if [ -z "${SKIP_BUILD:-}" ]; then # SKIP_BUILD=1 reuses the release binaries already built
  cargo build --release --locked -p wraith
  cargo build --release --locked -p wraith-server --example bare_hyper
fi
WRAITH="$ROOT/target/release/wraith"
BARE="$ROOT/target/release/examples/bare_hyper"

WORK=$(mktemp -d)
PIDS=()
cleanup() {
  for p in "${PIDS[@]:-}"; do
    [ -n "$p" ] && kill "$p" 2>/dev/null || true
  done
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

export WRAITH_HMAC_KEY=${WRAITH_HMAC_KEY:-wraith-bench-key-not-a-secret}

# The twin: the serve testdata HAR, imported and synthesized, plus a default fixture set of
# FIXTURE_ENTITIES customers (for the namespace memory figure).
(
  cd "$WORK"
  "$WRAITH" init bench --base-url https://api.shop.test >/dev/null
  "$WRAITH" import bench "$ROOT/testdata/serve/shop-customers.har" >/dev/null
  "$WRAITH" synth bench >/dev/null 2>&1
  printf '\n[serve.limits]\nmax_namespaces = %d\n' $((SESSIONS_RSS + 100)) >>twins/bench/wraith.toml
  mkdir -p twins/bench/state/fixtures/default
  python3 - "$FIXTURE_ENTITIES" >twins/bench/state/fixtures/default/fixture.json <<'PY'
import json, sys
n = int(sys.argv[1])
customers = [{"id": f"cus_fx{i:010d}", "object": "customer", "name": f"Fixture {i}",
              "email": f"user{i}@example.test", "created": 1780315200 + i,
              "metadata": {"tier": "gold" if i % 3 == 0 else "basic", "n": i}}
             for i in range(n)]
print(json.dumps({"description": "bench", "entities": {"customers": customers}}))
PY
)

start_bare() {
  "$BARE" 0 >"$WORK/bare.out" &
  PIDS+=($!)
  for _ in $(seq 1 200); do
    grep -q listening "$WORK/bare.out" 2>/dev/null && break
    sleep 0.05
  done
  BARE_URL=$(sed -n 's/^listening on //p' "$WORK/bare.out")
}

start_twin() {
  rm -f "$WORK/ready.json"
  # The access log (on by default, one line per request) is switched off: these figures measure
  # serving, not logging. SERVE_ARGS adds flags (e.g. SERVE_ARGS="--access-log json").
  # shellcheck disable=SC2086
  "$WRAITH" serve "$WORK/twins/bench" --port 0 --ready-json "$WORK/ready.json" \
    --access-log off ${SERVE_ARGS:-} "$@" 2>"$WORK/serve.err" &
  TWIN_PID=$!
  PIDS+=("$TWIN_PID")
  for _ in $(seq 1 400); do
    [ -s "$WORK/ready.json" ] && break
    sleep 0.05
  done
  TWIN_URL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["serve"]["url"])' "$WORK/ready.json")
}

stop_twin() {
  kill "$TWIN_PID" 2>/dev/null || true
  wait "$TWIN_PID" 2>/dev/null || true
}

oha_json() { # url [extra oha args...] -> prints "rps p50_ms p99_ms"
  local url=$1
  shift
  oha --no-tui --output-format json -z "$DURATION" -c "$CONNS" "$@" "$url" >"$WORK/oha.json"
  python3 - "$WORK/oha.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s, p = d["summary"], d["latencyPercentiles"]
ok = d.get("statusCodeDistribution", {})
print(f'{s["requestsPerSec"]:.0f} {p["p50"]*1000:.3f} {p["p99"]*1000:.3f} {json.dumps(ok, sort_keys=True)}')
PY
}

wrk_rps() { # url -> requests/s of the create+read script
  wrk -t2 -c"$CONNS" -d"$DURATION" -s "$ROOT/bench/create_read.lua" "$1" >"$WORK/wrk.out"
  awk '/Requests\/sec/ {print $2}' "$WORK/wrk.out"
  grep -E 'creates:' "$WORK/wrk.out" >&2 || true
}

start_bare
start_twin

GET_PATH=/v1/customers/cus_Ann0000000001
curl -fsS -o /dev/null -D - "$TWIN_URL$GET_PATH" | grep -i '^x-wraith-provenance' >&2

echo "== exact-replay GET vs bare hyper (oha, $CONNS connections, $DURATION)" >&2
read -r BARE_RPS BARE_P50 BARE_P99 BARE_CODES < <(oha_json "$BARE_URL/")
read -r GET_RPS GET_P50 GET_P99 GET_CODES < <(oha_json "$TWIN_URL$GET_PATH")
echo "bare: $BARE_RPS req/s $BARE_CODES; twin GET: $GET_RPS req/s $GET_CODES" >&2

echo "== p99 at half of the twin's peak (oha -q)" >&2
HALF=$((${GET_RPS%.*} / 2))
read -r HALF_RPS HALF_P50 HALF_P99 HALF_CODES < <(oha_json "$TWIN_URL$GET_PATH" -q "$HALF" --latency-correction)
# The same rate against bare hyper: what the machine itself adds to the tail.
read -r BHALF_RPS BHALF_P50 BHALF_P99 BHALF_CODES < <(oha_json "$BARE_URL/" -q "$HALF" --latency-correction)

echo "== stateful create+read over 100 sessions (wrk + bench/create_read.lua)" >&2
BARE_WRK=$(wrk_rps "$BARE_URL")
TWIN_WRK=$(wrk_rps "$TWIN_URL")
stop_twin

echo "== resident memory of $SESSIONS_RSS namespaces seeded with $FIXTURE_ENTITIES entities each" >&2
start_twin
RSS_IDLE=$(awk '/VmRSS/ {print $2}' "/proc/$TWIN_PID/status")
seq 1 "$SESSIONS_RSS" | xargs -P 4 -I{} curl -fsS -o /dev/null \
  -H 'content-type: application/json' -d '{"session":"rss-{}"}' "$TWIN_URL/__wraith/session"
SESSIONS_LIVE=$(curl -fsS "$TWIN_URL/__wraith/session" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["sessions"]))')
curl -fsS -o /dev/null -w '%{http_code}\n' -H 'X-Wraith-Session: rss-1' "$TWIN_URL/v1/customers/cus_fx0000000042" >&2
RSS_FULL=$(awk '/VmRSS/ {print $2}' "/proc/$TWIN_PID/status")
stop_twin

ratio() { python3 -c "print(f'{$1 / $2 * 100:.0f}%')"; }
cat <<EOF
| measurement | figure | target |
| --- | --- | --- |
| bare hyper, fixed body (oha) | $BARE_RPS req/s, p50 $BARE_P50 ms, p99 $BARE_P99 ms | baseline |
| twin, exact-replay GET (oha) | $GET_RPS req/s ($(ratio "$GET_RPS" "$BARE_RPS") of bare), p50 $GET_P50 ms, p99 $GET_P99 ms | ≥ 70% |
| twin, GET at half of its peak ($HALF req/s asked, $HALF_RPS served) | p50 $HALF_P50 ms, p99 $HALF_P99 ms | p99 < 1 ms |
| bare hyper at the same rate (control) | p50 $BHALF_P50 ms, p99 $BHALF_P99 ms | |
| bare hyper, create+read script (wrk) | $BARE_WRK req/s | baseline |
| twin, create+read over 100 sessions (wrk) | $TWIN_WRK req/s ($(ratio "$TWIN_WRK" "$BARE_WRK") of bare) | ≥ 50% |
| twin RSS, idle after startup | $((RSS_IDLE / 1024)) MiB | |
| twin RSS, $SESSIONS_LIVE namespaces × $FIXTURE_ENTITIES fixture entities | $((RSS_FULL / 1024)) MiB | < 300 MB |
EOF
