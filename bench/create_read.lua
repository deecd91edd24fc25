-- wrk script: stateful create-then-read over 100 sessions, half creates and half reads.
-- A create's name is the session it was sent in; its response echoes the name and carries the
-- new id, so a later read fetches that id in that same session. Responses on the connections of
-- one wrk thread arrive in any order, so created (session, id) pairs go to a small ring and the
-- reads take them from there.
local ring = {}
local ring_size = 256
local ring_next = 1
local n = 0
local tid = 0
local next_tid = 0
local threads = {}
reads = 0
creates = 0

function setup(thread)
  thread:set("tid", next_tid)
  next_tid = next_tid + 1
  table.insert(threads, thread)
end

function request()
  n = n + 1
  if n % 2 == 0 and #ring > 0 then
    local pair = ring[(n / 2) % #ring + 1]
    reads = reads + 1
    return wrk.format("GET", "/v1/customers/" .. pair.id,
      { ["X-Wraith-Session"] = pair.session })
  end
  local session = "bench-" .. ((tid * 37 + n) % 100)
  creates = creates + 1
  return wrk.format("POST", "/v1/customers",
    { ["X-Wraith-Session"] = session, ["Content-Type"] = "application/json" },
    '{"name":"' .. session .. '"}')
end

function response(status, headers, body)
  if status ~= 200 then
    return
  end
  local id = body:match('"id":"([^"]+)"')
  local name = body:match('"name":"(bench%-%d+)"')
  if id and name then
    ring[ring_next] = { id = id, session = name }
    ring_next = ring_next % ring_size + 1
  end
end

function done(summary, latency, requests)
  local r, c = 0, 0
  for _, t in ipairs(threads) do
    r = r + t:get("reads")
    c = c + t:get("creates")
  end
  io.write(string.format("creates: %d reads: %d non-2xx/3xx: %d\n", c, r, summary.errors.status))
end
