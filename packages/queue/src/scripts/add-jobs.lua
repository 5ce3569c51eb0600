--[[
  Adds a batch of task jobs to one BullMQ queue in one call. BullMQ's addBulk
  runs a script per job that also bumps the id counter, checks the queue's
  meta, writes two entries to the event stream and sets the marker: ~65 µs of
  client and Redis CPU per job, where this takes a few.

  The jobs are written in the layout BullMQ's own addPrioritizedJob and
  addDelayedJob write (bullmq pinned in packages/queue; add-jobs.test.ts
  compares the two field by field and fails when the layout moves), so
  BullMQ's Queue still reads, counts and re-prioritizes them:
    - the job hash: name, data, opts (JSON), timestamp, delay, priority;
    - due now: the prioritized zset, scored priority * 2^32 + the queue's
      priority counter (includes/getPriorityScore.lua);
    - later: the delayed zset, scored due ms * 0x1000 + a counter within that
      millisecond (includes/getDelayedScore.lua).
  Not written: the event stream, the marker and the id counter. Only BullMQ
  Workers and QueueEvents read them; Tasklane workers take jobs with
  take-jobs.lua.

  A job whose hash exists is left as it is: there is one job per (task,
  dispatch generation), so dispatching the same generation again is a no-op.

  Then it rings the workers' doorbell. Rung from here, it can only be heard
  after the jobs are in, however the caller's commands around this call are
  ordered (a caller pipelines it with the active-queue SADD, and ioredis
  resends a script Redis has lost outside that pipeline).

  Input:
    KEYS[1] prioritized zset
    KEYS[2] delayed zset
    KEYS[3] priority counter
    ARGV[1] the queue's job key prefix ("<prefix>:<queue>:")
    ARGV[2] now (ms): the jobs' timestamp
    ARGV[3] the doorbell channel
    ARGV[4] the doorbell message (doorbell.ts: the queue's name, and when every
      job is delayed the earliest due time)
    ARGV[5..] four values per job: job id, data (JSON), priority (>= 1), delay (ms, >= 0)

  Output: how many jobs were added
]]
local prefix = ARGV[1]
local timestamp = tonumber(ARGV[2])
local added = 0

for i = 5, #ARGV, 4 do
  local jobId = ARGV[i]
  local jobKey = prefix .. jobId
  if redis.call("EXISTS", jobKey) == 0 then
    local priority = tonumber(ARGV[i + 2])
    local delay = tonumber(ARGV[i + 3])
    local opts = '{"removeOnFail":true,"removeOnComplete":true,"jobId":' .. cjson.encode(jobId) ..
      ',"priority":' .. priority .. ',"delay":' .. delay .. ',"attempts":1}'
    redis.call("HSET", jobKey, "name", "task", "data", ARGV[i + 1], "opts", opts,
      "timestamp", timestamp, "delay", delay, "priority", priority)
    if delay > 0 then
      local due = timestamp + delay
      local minScore = due * 0x1000
      local maxScore = (due + 1) * 0x1000 - 1
      local last = redis.call("ZREVRANGEBYSCORE", KEYS[2], maxScore, minScore, "WITHSCORES", "LIMIT", 0, 1)
      local score = minScore
      if last[2] then score = math.min(tonumber(last[2]) + 1, maxScore) end
      redis.call("ZADD", KEYS[2], score, jobId)
    else
      local counter = redis.call("INCR", KEYS[3])
      redis.call("ZADD", KEYS[1], priority * 0x100000000 + counter % 0x100000000, jobId)
    end
    added = added + 1
  end
end
redis.call("PUBLISH", ARGV[3], ARGV[4])
return added
