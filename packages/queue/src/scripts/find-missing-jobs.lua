--[[
  The reconciler's check of jobs that belong in one BullMQ queue: which are
  not there, which a taker left behind, and which are there but in no list a
  worker takes from. One call per queue and sweep page, in place of several
  commands per job.

  Input:
    KEYS[1] the queue's wait list
    KEYS[2] the queue's prioritized zset
    KEYS[3] the queue's delayed zset
    KEYS[4..] the jobs' hashes ("<prefix>:<queue>:<job id>"), all of one
         queue: one hash tag, so one cluster slot, which each job's lock key
         ("<job hash>:lock") and the three keys above share.
    ARGV[1] the queue's job key prefix ("<prefix>:<queue>:")

  Output: { gone, orphaned, stranded }, each a list of 1-based indexes into
  the job hashes (KEYS[4] is 1):
    gone      no such job;
    orphaned  taken with BullMQ's moveToActive (processedOn set) and no longer
              locked: whoever took it is gone. Only workers of earlier
              versions took jobs that way; today's take-jobs.lua deletes a job
              in the call that takes it;
    stranded  the hash is there but its id is in neither the wait list, the
              prioritized set nor the delayed set, so take-jobs.lua never
              reaches it, and add-jobs.lua, which leaves an existing hash as it
              is, cannot put it back. Every script that writes a job keeps the
              hash and its entry together, so only a loss of keys does this: a
              restart that lost the last writes of a set, an eviction of the
              set (maxmemory with an allkeys policy), a DEL by hand.
]]
local waitLength = redis.call('LLEN', KEYS[1])
local gone, orphaned, stranded = {}, {}, {}
for i = 4, #KEYS do
  local key = KEYS[i]
  local n = i - 3
  if redis.call('EXISTS', key) == 0 then
    gone[#gone + 1] = n
  elseif redis.call('HEXISTS', key, 'processedOn') == 1 then
    if redis.call('EXISTS', key .. ':lock') == 0 then
      orphaned[#orphaned + 1] = n
    end
  else
    local jobId = string.sub(key, #ARGV[1] + 1)
    if not redis.call('ZSCORE', KEYS[2], jobId) and not redis.call('ZSCORE', KEYS[3], jobId)
      and (waitLength == 0 or not redis.call('LPOS', KEYS[1], jobId)) then
      stranded[#stranded + 1] = n
    end
  end
end
return { gone, orphaned, stranded }
