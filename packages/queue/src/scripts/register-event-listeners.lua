--[[
  Marks tenants as having live task-event subscribers, until Redis's now plus
  ARGV[1] ms. Redis's clock (TIME), so gateways and the relay agree on it.
  ZADD GT: a refresh by one gateway never shortens another gateway's mark.

  A tenant not marked before (a first subscriber, or one whose mark had lapsed
  and been dropped) is announced on ARGV[2]: the relay, which polls slowly
  while nobody listens, reads at once instead of after its slow poll.

  Input:
    KEYS[1] sorted set <prefix>:event-listeners (member tenant id, score expiry in ms)
    ARGV[1] how long the mark holds, ms (> 0)
    ARGV[2] pub/sub channel announcing newly marked tenants
    ARGV[3..] tenant ids

  Output: the number of tenants newly marked (refreshes not counted)
]]
local t = redis.call('TIME')
local untilMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) + tonumber(ARGV[1])
local added = 0
for i = 3, #ARGV do
  added = added + redis.call('ZADD', KEYS[1], 'GT', untilMs, ARGV[i])
end
if added > 0 then
  redis.call('PUBLISH', ARGV[2], added)
end
return added
