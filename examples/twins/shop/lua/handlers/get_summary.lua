-- GET /customers/:id/summary, an authored route (lua/routes.toml) no recording covers.
-- Bound by file name: a sub-resource binds `<method>_<last segment>`.
--
-- It reads the session's store, the same one the recorded CRUD routes serve: recorded
-- customers, the fixture set, and whatever this session created, changed or deleted.
local id = req.params.id
local customer = state.get("customers", id)
if customer == nil then
  emit.error(404, "not_found", "no customer " .. id)
  return
end

local orders = state.query("orders", "customer_id", id)
local total = 0
local open = 0
for _, order in ipairs(orders) do
  total = total + (tonumber(order.amount) or 0)
  if order.status == "pending" then
    open = open + 1
  end
end

emit.json({
  customer = id,
  name = customer.name,
  email = customer.email,
  orders = #orders,
  open_orders = open,
  total_amount = total,
})
