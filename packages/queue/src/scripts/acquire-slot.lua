--[[
  Takes one concurrency slot of a tenant and one of its queue, atomically, or
  neither. A slot is a member of a sorted set scored by its expiry, so a
  worker that dies holding slots does not leak them: expired members are
  dropped before counting.

  Input:
    KEYS[1] tenant slots zset   (<prefix>:{<tenant>}:slots)
    KEYS[2] queue slots zset    (<prefix>:{<tenant>}:slots:<queue>)
    ARGV[1] now (ms)
    ARGV[2] expiry of this slot (ms)
    ARGV[3] slot id
    ARGV[4] tenant limit (-1 = none)
    ARGV[5] queue limit (-1 = none)

  Output:
    1  acquired
    0  tenant at its limit
    -1 queue at its limit
]]
local now = tonumber(ARGV[1])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local tenantLimit = tonumber(ARGV[4])
local queueLimit = tonumber(ARGV[5])
if tenantLimit >= 0 and redis.call("ZCARD", KEYS[1]) >= tenantLimit then
  return 0
end
if queueLimit >= 0 and redis.call("ZCARD", KEYS[2]) >= queueLimit then
  return -1
end
redis.call("ZADD", KEYS[1], ARGV[2], ARGV[3])
redis.call("ZADD", KEYS[2], ARGV[2], ARGV[3])
-- Idle sets disappear on their own.
redis.call("PEXPIRE", KEYS[1], math.max(1, tonumber(ARGV[2]) - now))
redis.call("PEXPIRE", KEYS[2], math.max(1, tonumber(ARGV[2]) - now))
return 1
