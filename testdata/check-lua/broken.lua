-- Does not compile: the `if` is never closed.
if req.method == "GET" then
  return { ok = true }
