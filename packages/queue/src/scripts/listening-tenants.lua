--[[
  The tenants whose task-event subscribers are live now (marks not expired,
  by Redis's clock). Expired marks are removed on the way, so the set holds
  only the tenants of gateways that keep refreshing.

  Input:
    KEYS[1] sorted set <prefix>:event-listeners (see register-event-listeners.lua)

  Output: tenant ids, in no particular order
]]
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. string.format('%d', nowMs))
return redis.call('ZRANGE', KEYS[1], 0, -1)
