--[[
  Token bucket: takes up to ARGV[3] whole tokens, as many as are available. Refill is continuous at `rate`
  tokens per second up to `burst`; state is {tokens, last refill ms} in a hash.
  Redis's own clock is used so every process agrees on time.

  Input:
    KEYS[1] bucket hash
    ARGV[1] rate (tokens per second, > 0)
    ARGV[2] burst (capacity, >= 1)
    ARGV[3] most tokens to take (>= 1)

  Output:
    { taken, 0 }        taken >= 1 tokens
    { 0, waitMs }       none available; one token in waitMs
]]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call("HMGET", KEYS[1], "tokens", "ts")
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil then
  tokens = burst
  ts = now
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000)
local result
local taken = math.min(want, math.floor(tokens))
if taken >= 1 then
  tokens = tokens - taken
  result = { taken, 0 }
else
  result = { 0, math.ceil((1 - tokens) * 1000 / rate) }
end
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "ts", tostring(now))
-- A full bucket needs no state: let it expire once it would have refilled.
redis.call("PEXPIRE", KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return result
