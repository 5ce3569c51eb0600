--[[
  The reconciler's check of jobs that belong in one BullMQ queue: which are
  not there, and which a taker left behind. One call per queue and sweep
  page, in place of three commands per job.

  Input:
    KEYS the jobs' hashes ("<prefix>:<queue>:<job id>"), all of one queue:
         one hash tag, so one cluster slot, which each job's lock key
         ("<job hash>:lock") shares.

  Output: { gone, orphaned }, each a list of 1-based indexes into KEYS:
    gone      no such job;
    orphaned  taken with BullMQ's moveToActive (processedOn set) and no longer
              locked: whoever took it is gone. Only workers of earlier
              versions took jobs that way; today's take-jobs.lua deletes a job
              in the call that takes it.
]]
local gone, orphaned = {}, {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    gone[#gone + 1] = i
  elseif redis.call('HEXISTS', key, 'processedOn') == 1 and redis.call('EXISTS', key .. ':lock') == 0 then
    orphaned[#orphaned + 1] = i
  end
end
return { gone, orphaned }
