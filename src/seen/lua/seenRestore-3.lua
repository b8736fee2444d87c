--[[ seenRestore-3: OR a checkpointed day bitmap into Redis and give the day a fresh version
  KEYS[1]   the day's bitmap (missing after a loss; or holding marks made since)
  KEYS[2]   its version key
  KEYS[3]   scratch key (same hash tag), deleted before the script ends
  ARGV[1]   the checkpointed bitmap, ceil(m/8) bytes
  ARGV[2]   time to live, ms (the day's; an existing longer one is kept)
  ARGV[3]   a random integer in [1, 2^48): the day's new version
  returns   1
  OR, not SET: marks made between the loss and this restore stay (and restores by several processes
  at once give the same bits). The version is new and random, so no process's cached copy of the
  day (redis-seen-filter.ts) matches the restored bitmap. BITOP stores without a time to live, so
  it is set again: the longer of the day's and ARGV[2].
]]
local call = redis.call
local day, version, scratch = KEYS[1], KEYS[2], KEYS[3]
local ttl = math.max(tonumber(ARGV[2]), call('PTTL', day))
call('SET', scratch, ARGV[1])
call('BITOP', 'OR', day, day, scratch)
call('DEL', scratch)
call('SET', version, ARGV[3])
call('PEXPIRE', day, ttl)
call('PEXPIRE', version, ttl)
return 1
