--[[
  Drops jobs a worker has taken (BullMQ moved them to active under its lock)
  and is about to start in Postgres, which from then on is the only record of
  the task. One call for a whole wave of one queue, instead of a BullMQ
  moveToFinished per job: that script also writes events, metrics and
  completed-set bookkeeping that nothing here reads.

  A job whose lock is no longer this token's (it expired and the job was
  taken again) is left alone.

  Input:
    KEYS[1] the queue's active list
    ARGV[1] the queue's job key prefix ("<prefix>:<queue>:"); a job's keys share its hash tag
    ARGV[2] the lock token the jobs were taken with
    ARGV[3..] job ids

  Output: how many jobs were dropped
]]
local dropped = 0
for i = 3, #ARGV do
  local jobId = ARGV[i]
  local jobKey = ARGV[1] .. jobId
  if redis.call("GET", jobKey .. ":lock") == ARGV[2] then
    redis.call("LREM", KEYS[1], -1, jobId)
    redis.call("DEL", jobKey, jobKey .. ":lock", jobKey .. ":logs")
    dropped = dropped + 1
  end
end
return dropped
