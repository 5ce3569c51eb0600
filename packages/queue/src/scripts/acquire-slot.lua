--[[
  Takes up to N concurrency slots of a tenant and as many of its queue,
  atomically: as many as both limits leave room for. A slot is a member of a
  sorted set scored by its expiry, so a worker that dies holding slots does
  not leak them: expired members are dropped before counting.

  Input:
    KEYS[1] tenant slots zset   (<prefix>:{<tenant>}:slots)
    KEYS[2] queue slots zset    (<prefix>:{<tenant>}:slots:<queue>)
    ARGV[1] now (ms)
    ARGV[2] expiry of these slots (ms)
    ARGV[3] tenant limit (-1 = none)
    ARGV[4] queue limit (-1 = none)
    ARGV[5..] slot ids, one per slot wanted

  Output: how many slots were taken (the first that many ids); 0 when a limit is reached
]]
local now = tonumber(ARGV[1])
local expiry = ARGV[2]
local tenantLimit = tonumber(ARGV[3])
local queueLimit = tonumber(ARGV[4])
redis.call("ZREMRANGEBYSCORE", KEYS[1], "-inf", now)
redis.call("ZREMRANGEBYSCORE", KEYS[2], "-inf", now)
local room = #ARGV - 4
if tenantLimit >= 0 then room = math.min(room, tenantLimit - redis.call("ZCARD", KEYS[1])) end
if queueLimit >= 0 then room = math.min(room, queueLimit - redis.call("ZCARD", KEYS[2])) end
if room <= 0 then return 0 end
local members = {}
for i = 1, room do
  members[#members + 1] = expiry
  members[#members + 1] = ARGV[4 + i]
end
redis.call("ZADD", KEYS[1], unpack(members))
redis.call("ZADD", KEYS[2], unpack(members))
-- Idle sets disappear on their own.
local ttl = math.max(1, tonumber(expiry) - now)
redis.call("PEXPIRE", KEYS[1], ttl)
redis.call("PEXPIRE", KEYS[2], ttl)
return room
