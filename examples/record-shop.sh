#!/usr/bin/env bash
# Re-record the example twin `examples/twins/shop` from the example upstream `examples/shop-api`.
#
#   examples/record-shop.sh
#
# What it does, in order:
#   1. builds the `wraith` and `shop-api` binaries (debug);
#   2. starts shop-api on a free port and `wraith init`s a scratch twin pointing at it;
#   3. starts `wraith record` on a free port (`--port 0 --ready-json`) and drives a realistic
#      story through the proxy with curl: creates, reads, a 404, validation 400s, updates,
#      a delete then a second delete, list pages with limit/offset, a filter; then
#      `POST /__wraith/new-session` and a second, shorter session;
#   4. stops the proxy with SIGINT (manifests finalized) and shop-api;
#   5. replaces wraith.toml, scrub.toml, state/ and recordings/ under examples/twins/shop with
#      the scratch twin's, rewriting `[service] base_url` to the stable http://127.0.0.1:18080
#      (the recorded `host` headers keep whatever ephemeral port the proxy had), and writes the
#      example's state/schema.json and default fixture set.
#
# shop-api is deterministic (ids and `created` come from a counter) and the HMAC key is fixed,
# so re-running changes only timestamps, `date` headers, ports and session ids.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="$ROOT/examples/twins/shop"
STABLE_BASE_URL="http://127.0.0.1:18080"
# A fixed, public key: the example's tokens must be reproducible. Never reuse it for real traffic.
export WRAITH_HMAC_KEY="wraith-example-shop-twin-public-key"

cd "$ROOT"
cargo build --quiet -p wraith -p shop-api
BIN="$ROOT/target/debug"

WORK="$(mktemp -d)"
SHOP_PID=""
RECORD_PID=""
cleanup() {
    [[ -n "$RECORD_PID" ]] && kill "$RECORD_PID" 2>/dev/null || true
    [[ -n "$SHOP_PID" ]] && kill "$SHOP_PID" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT

wait_for_file() { # path, what
    for _ in $(seq 1 300); do
        [[ -s "$1" ]] && return 0
        sleep 0.05
    done
    echo "record-shop: $2 did not start" >&2
    exit 4
}

"$BIN/shop-api" --port 0 --ready-file "$WORK/shop.url" &
SHOP_PID=$!
wait_for_file "$WORK/shop.url" "shop-api"
UPSTREAM="$(tr -d '\n' < "$WORK/shop.url")"

(cd "$WORK" && "$BIN/wraith" init shop --base-url "$UPSTREAM" >/dev/null)
TWIN="$WORK/twins/shop"

"$BIN/wraith" record "$TWIN" --port 0 --ready-json "$WORK/record.json" --tag shop-demo \
    2> "$WORK/record.log" &
RECORD_PID=$!
wait_for_file "$WORK/record.json" "wraith record"
PROXY="$(sed -E 's/.*"url":"([^"]+)".*/\1/' "$WORK/record.json")"
echo "record-shop: shop-api at $UPSTREAM, recording proxy at $PROXY"

# req METHOD PATH [JSON] -> prints the body to $WORK/last.json, checks the status.
req() {
    local method="$1" path="$2" body="${3:-}" expect="${4:-}"
    local args=(-sS -o "$WORK/last.json" -w '%{http_code}' -X "$method"
        -H 'accept: application/json' -H 'user-agent: shop-demo-client/1.0')
    if [[ -n "$body" ]]; then
        args+=(-H 'content-type: application/json' --data "$body")
    fi
    local status
    status="$(curl "${args[@]}" "$PROXY$path")"
    printf '  %-6s %-48s %s\n' "$method" "$path" "$status"
    if [[ -n "$expect" && "$status" != "$expect" ]]; then
        echo "record-shop: expected $expect for $method $path, got $status: $(cat "$WORK/last.json")" >&2
        exit 4
    fi
}
# The "id" of the last JSON answer (shop-api writes it first).
last_id() { sed -E 's/^\{"id":"([^"]+)".*/\1/' "$WORK/last.json"; }

echo "record-shop: session 1 (customers and orders lifecycle)"
req POST /customers '{"email":"ada@example.com","name":"Ada Lovelace"}' 201
ADA="$(last_id)"
req POST /customers '{"email":"grace@example.com","name":"Grace Hopper"}' 201
GRACE="$(last_id)"
req POST /customers '{"email":"alan@example.com","name":"Alan Turing"}' 201
ALAN="$(last_id)"
req POST /customers '{"email":"edsger@example.com"}' 201
EDSGER="$(last_id)"
req GET "/customers/$ADA" "" 200
req GET "/customers/$GRACE" "" 200
req GET /customers/cus_0000000000none "" 404
req POST /customers '{"name":"Nobody"}' 400
req POST /customers '{"email":"not-an-email","name":"Bad Email"}' 400
req PATCH "/customers/$GRACE" '{"name":"Grace Brewster Hopper"}' 200
req PATCH "/customers/$EDSGER" '{"name":"Edsger Dijkstra"}' 200
req GET "/customers/$GRACE" "" 200
req GET "/customers?limit=2" "" 200
req GET "/customers?limit=2&offset=2" "" 200
req GET "/customers?limit=0" "" 400
req POST /orders "{\"customer_id\":\"$ADA\",\"amount\":1200}" 201
ORDER1="$(last_id)"
req POST /orders "{\"customer_id\":\"$ADA\",\"amount\":5000,\"currency\":\"eur\"}" 201
req POST /orders "{\"customer_id\":\"$GRACE\",\"amount\":750}" 201
ORDER3="$(last_id)"
req POST /orders "{\"customer_id\":\"$ALAN\",\"amount\":9900}" 201
req POST /orders '{"customer_id":"cus_0000000000none","amount":100}' 400
req POST /orders "{\"customer_id\":\"$ADA\"}" 400
req GET "/orders/$ORDER1" "" 200
req PATCH "/orders/$ORDER1" '{"status":"paid"}' 200
req GET "/orders/$ORDER1" "" 200
req PATCH "/orders/$ORDER1" '{"status":"lost"}' 400
req GET "/orders?customer_id=$ADA" "" 200
req GET "/orders?customer_id=$GRACE" "" 200
req GET "/orders?limit=2" "" 200
req GET "/orders?limit=2&offset=2" "" 200
req DELETE "/customers/$ALAN" "" 200
req DELETE "/customers/$ALAN" "" 404
req GET "/customers/$ALAN" "" 404
req DELETE "/orders/$ORDER3" "" 200
req GET "/orders/$ORDER3" "" 404
req GET /customers "" 200
req GET /orders "" 200

curl -sS -o /dev/null -X POST "$PROXY/__wraith/new-session"

echo "record-shop: session 2 (a short checkout story)"
req POST /customers '{"email":"barbara@example.com","name":"Barbara Liskov"}' 201
BARBARA="$(last_id)"
req GET "/customers/$BARBARA" "" 200
req POST /orders "{\"customer_id\":\"$BARBARA\",\"amount\":4200}" 201
ORDER5="$(last_id)"
req GET "/orders/$ORDER5" "" 200
req PATCH "/orders/$ORDER5" '{"status":"shipped"}' 200
req GET "/orders?customer_id=$BARBARA" "" 200
req DELETE "/orders/$ORDER5" "" 200
req DELETE "/customers/$BARBARA" "" 200
req GET "/customers/$BARBARA" "" 404

kill -INT "$RECORD_PID"
wait "$RECORD_PID"
RECORD_PID=""
kill "$SHOP_PID" 2>/dev/null || true
wait "$SHOP_PID" 2>/dev/null || true
SHOP_PID=""
grep -E '^recorded session|exchange\(s\)' "$WORK/record.log" | sed 's/^/  /'

# Replace the committed twin's files with the fresh ones.
mkdir -p "$DEST"
rm -rf "$DEST/wraith.toml" "$DEST/scrub.toml" "$DEST/state" "$DEST/recordings"
cp "$TWIN/wraith.toml" "$TWIN/scrub.toml" "$DEST/"
cp -R "$TWIN/state" "$TWIN/recordings" "$DEST/"
sed -i.bak -E "s#^base_url = \".*\"#base_url = \"$STABLE_BASE_URL\"#" "$DEST/wraith.toml"
rm -f "$DEST/wraith.toml.bak"
grep -q "^base_url = \"$STABLE_BASE_URL\"" "$DEST/wraith.toml"

# The example's declared entity types and its default fixture set (two customers), so
# `wraith serve` sessions start with data. Canonical JSON: sorted keys, trailing newline.
cat > "$DEST/state/schema.json" <<'JSON'
{"entity_types":{"customers":{"id_format":"cus_[a-zA-Z0-9]{14}","indexes":[{"field":"email","type":"equality"}],"primary_key":"id"},"orders":{"foreign_keys":[{"field":"customer_id","references":"customers.id"}],"id_format":"ord_[a-zA-Z0-9]{14}","indexes":[{"field":"customer_id","type":"equality"}],"primary_key":"id"}},"schema_version":1}
JSON
mkdir -p "$DEST/state/fixtures/default"
cat > "$DEST/state/fixtures/default/fixture.json" <<'JSON'
{"description":"two customers every new session starts with","entities":{"customers":[{"created":1767225000,"email":"margaret@example.com","id":"cus_FixtureMarg001","name":"Margaret Hamilton","object":"customer"},{"created":1767225060,"email":"katherine@example.com","id":"cus_FixtureKath002","name":"Katherine Johnson","object":"customer"}],"orders":[]}}
JSON

echo "record-shop: wrote $(find "$DEST/recordings" -name '*.wrec.zst' | wc -l | tr -d ' ') exchanges to ${DEST#"$ROOT"/}"
