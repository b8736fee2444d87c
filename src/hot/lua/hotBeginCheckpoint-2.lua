--[[ hotBeginCheckpoint-2: dirty marks -> in-flight set (kept until each id is checkpointed)
  KEYS[1]  checkpoint:dirty      KEYS[2]  checkpoint:inflight
  returns  every in-flight id (what an earlier, failed checkpoint left there included)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
  redis.call('DEL', KEYS[1])
end
return redis.call('SMEMBERS', KEYS[2])
