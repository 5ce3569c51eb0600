--[[
  Marks tenants as having live task-event subscribers, until Redis's now plus
  ARGV[1] ms. Redis's clock (TIME), so gateways and the relay agree on it.
  ZADD GT: a refresh by one gateway never shortens another gateway's mark.

  Input:
    KEYS[1] sorted set <prefix>:event-listeners (member tenant id, score expiry in ms)
    ARGV[1] how long the mark holds, ms (> 0)
    ARGV[2..] tenant ids

  Output: the number of tenants marked
]]
local t = redis.call('TIME')
local untilMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], 'GT', untilMs, ARGV[i])
end
return #ARGV - 1
