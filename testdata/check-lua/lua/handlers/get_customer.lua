-- Overrides the recorded `GET /v1/customers/:id` with a shape the API never answers:
-- `Name` for `name`, no `object`, and `created` as a string instead of a number.
local id = string.match(req.path, "[^/]+$")
local c = state.get("customers", id)
if c == nil then
  emit.status(404)
  emit.json({ error = { type = "invalid_request_error", message = "No such customer" } })
  return
end
return { id = id, Name = c.name, created = tostring(c.created) }
