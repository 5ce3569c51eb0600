--[[
  API token bucket of one tenant: takes ARGV[3] tokens at once or none (a
  batched HTTP request is admitted whole or refused whole), and, once it can,
  up to ARGV[4] in all (a gateway's allotment for the calls that follow). Refill is
  continuous at ARGV[1] tokens per second up to ARGV[2]. Redis's own clock
  (TIME) is used, so every gateway instance agrees on time. A new or expired
  bucket starts full.

  Input:
    KEYS[1] bucket hash, <prefix>:{<tenant id>}:api-bucket (fields: tokens, ts = ms of last refill)
    ARGV[1] rate: tokens per second (> 0)
    ARGV[2] burst: capacity (>= 1)
    ARGV[3] cost: tokens this request needs (1 <= cost <= burst)
    ARGV[4] want: tokens to take when there are that many (>= cost; absent: cost)

  Output:
    { 1, tokens left (floor), tokens taken }    admitted; cost <= taken <= want
    { 0, ms until admissible }                  refused; nothing was taken
]]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local want = math.max(cost, tonumber(ARGV[4] or cost))
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local state = redis.call("HMGET", KEYS[1], "tokens", "ts")
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = burst
  ts = now
end
-- A bucket whose burst was lowered holds at most the new burst; a clock step back never removes tokens.
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local result
if tokens >= cost then
  -- cost is whole and tokens >= cost, so floor(tokens) >= cost: never less than the call needs.
  local taken = math.min(want, math.floor(tokens))
  tokens = tokens - taken
  result = { 1, math.floor(tokens), taken }
else
  result = { 0, math.ceil((cost - tokens) * 1000 / rate) }
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "ts", tostring(now))
-- Once it would have refilled completely the bucket needs no state: let it expire.
redis.call("PEXPIRE", KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return result
