--[[
  Takes up to ARGV[3] jobs out of one BullMQ queue, in the order BullMQ's
  own workers would get them, and deletes them: the worker is about to start
  their tasks in Postgres, which from then on is the only record of them.
  One call per queue and fetch wave, instead of a BullMQ moveToActive per job
  (which also locks the job, writes an event, stamps the hash and returns all
  of it) followed by a call that removed the job again.

  This follows BullMQ's key layout (bullmq pinned in packages/queue; the
  take-jobs integration test adds jobs with BullMQ itself and fails when the
  layout moves):
    - due delayed jobs are promoted first, as moveToActive does
      (includes/promoteDelayedJobs.lua: delayed score = due ms * 0x1000 + counter;
      priority 0 goes to the wait list, others to the prioritized set scored
      priority * 2^32 + the queue's priority counter);
    - the wait list is taken before the prioritized set (RPOP: LPUSH added them).
  BullMQ's event stream and marker are not written: no Tasklane process
  listens to them or blocks on the marker.

  Input:
    KEYS[1] wait list
    KEYS[2] prioritized zset
    KEYS[3] delayed zset
    KEYS[4] priority counter
    ARGV[1] the queue's job key prefix ("<prefix>:<queue>:")
    ARGV[2] now (ms)
    ARGV[3] most jobs to take (>= 1)

  Output: { { jobId1, data1, jobId2, data2, ... }, drained, nextDelayedScore }
    data: the job's JSON.
    drained: 1 when the wait list and the prioritized set ran out before
      ARGV[3] jobs (nothing is runnable now), else 0.
    nextDelayedScore: when drained, the delayed set's lowest score (the next
      job due), or nil when it is empty: the worker knows when to look again,
      or that the queue may leave the active set, without another call.
]]
local prefix = ARGV[1]
local now = tonumber(ARGV[2])
local want = tonumber(ARGV[3])

local due = redis.call("ZRANGEBYSCORE", KEYS[3], 0, (now + 1) * 0x1000 - 1, "LIMIT", 0, 1000)
if #due > 0 then
  redis.call("ZREM", KEYS[3], unpack(due))
  for _, jobId in ipairs(due) do
    local jobKey = prefix .. jobId
    local priority = tonumber(redis.call("HGET", jobKey, "priority")) or 0
    if priority == 0 then
      redis.call("LPUSH", KEYS[1], jobId)
    else
      local counter = redis.call("INCR", KEYS[4])
      redis.call("ZADD", KEYS[2], priority * 0x100000000 + counter % 0x100000000, jobId)
    end
    redis.call("HSET", jobKey, "delay", 0)
  end
end

local ids = redis.call("RPOP", KEYS[1], want) or {}
if #ids < want then
  local popped = redis.call("ZPOPMIN", KEYS[2], want - #ids)
  for i = 1, #popped, 2 do
    ids[#ids + 1] = popped[i]
  end
end

local drained = 0
local nextDelayed = false
if #ids < want then
  drained = 1
  local first = redis.call("ZRANGE", KEYS[3], 0, 0, "WITHSCORES")
  if #first > 0 then
    nextDelayed = first[2]
  end
end

local out = {}
for _, jobId in ipairs(ids) do
  local jobKey = prefix .. jobId
  local data = redis.call("HGET", jobKey, "data")
  -- A job id without its hash was removed by other means; there is nothing to start.
  if data then
    redis.call("DEL", jobKey, jobKey .. ":logs")
    out[#out + 1] = jobId
    out[#out + 1] = data
  end
end
return { out, drained, nextDelayed }
