#!/usr/bin/env bash
# What a session running a Lua handler to its deadline holds up: per round, 20 clients start
# `GET /slow` (a handler that loops until its 100 ms deadline stops it) at once; 50 ms later
# one client times `GET /__wraith/health`, then `GET /customers` in another session. Then the
# cost to an ordinary request of such a twin: 3,000 sequential keep-alive `GET /customers`.
#
#   bench/long_requests.sh                        # release build of this tree
#   WRAITH=/path/to/other/wraith bench/long_requests.sh   # another build, to compare
#
# The twin is the bundled example with an authored `GET /slow` added. Run on an idle machine.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
if [ -z "${WRAITH:-}" ]; then
  cargo build --release --locked -p wraith
  WRAITH="$ROOT/target/release/wraith"
fi

WORK=$(mktemp -d)
PID=""
cleanup() {
  [ -n "$PID" ] && kill "$PID" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

cp -r "$ROOT/examples/twins/shop" "$WORK/shop"
printf '\n[[route]]\nmethod = "GET"\npath = "/slow"\nhandler = "slow"\n' >>"$WORK/shop/lua/routes.toml"
cat >"$WORK/shop/lua/handlers/slow.lua" <<'LUA'
local s = string.rep("a", 400000)
while true do s:find("b", 1, true) end
LUA

"$WRAITH" serve "$WORK/shop" --port 0 --ready-json "$WORK/ready.json" >/dev/null 2>"$WORK/serve.err" &
PID=$!
for _ in $(seq 200); do [ -s "$WORK/ready.json" ] && break; sleep 0.05; done

python3 - "$WORK/ready.json" <<'PY'
import http.client, json, sys, threading, time, urllib.request
port = json.load(open(sys.argv[1]))["serve"]["port"]
base = f"http://127.0.0.1:{port}"

def slow():
    try:
        urllib.request.urlopen(base + "/slow", timeout=30).read()
    except Exception:
        pass  # the handler's 500 is the point: it ran to its deadline

def timed(req):
    t0 = time.time()
    urllib.request.urlopen(req, timeout=30).read()
    return round((time.time() - t0) * 1000, 1)

rounds = []
for _ in range(3):
    clients = [threading.Thread(target=slow) for _ in range(20)]
    for c in clients:
        c.start()
    time.sleep(0.05)
    health = timed(base + "/__wraith/health")
    other = timed(urllib.request.Request(base + "/customers", headers={"X-Wraith-Session": "other"}))
    for c in clients:
        c.join()
    rounds.append((health, other))
print("health check ms / other session's read ms, per round:", rounds)

conn = http.client.HTTPConnection("127.0.0.1", port)
def read():
    conn.request("GET", "/customers", headers={"X-Wraith-Session": "s"})
    conn.getresponse().read()
for _ in range(200):
    read()
t0, n = time.time(), 3000
for _ in range(n):
    read()
print(f"{n / (time.time() - t0):.0f} req/s: sequential keep-alive GET /customers")
PY
