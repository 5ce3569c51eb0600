--[[
  Gives back start tokens taken with take-token.lua and not used: a PULL
  lease or a PUSH take found fewer tasks than it took tokens for. Without it
  an idle long poll spent the bucket a token at a time, and the burst it is
  configured to allow was gone when work came. The bucket is refilled to now
  first, as take-token.lua does, and never ends above `burst`: a refund can
  only undo a take, not create tokens.

  Input:
    KEYS[1] bucket hash (take-token.lua's)
    ARGV[1] rate (tokens per second, > 0)
    ARGV[2] burst (capacity, >= 1)
    ARGV[3] tokens to give back (>= 1)

  Output: the tokens now in the bucket (floor)
]]
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local back = tonumber(ARGV[3])
local t = redis.call("TIME")
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call("HMGET", KEYS[1], "tokens", "ts")
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
-- Gone (expired once full): full it is, and a refund changes nothing.
if tokens == nil or ts == nil then
  return burst
end
tokens = math.min(burst, tokens + math.max(0, now - ts) * rate / 1000 + back)
redis.call("HSET", KEYS[1], "tokens", tostring(tokens), "ts", tostring(now))
redis.call("PEXPIRE", KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return math.floor(tokens)
