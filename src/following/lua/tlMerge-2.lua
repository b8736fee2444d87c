--[[ tlMerge-2: merge tids into a prepared inbox, raise its floor, trim; optionally mark it ready
  KEYS[1]  the inbox (a ring of packed tids: includes/ring.lua)
  KEYS[2]  its state HASH (absent: nothing is written)
  ARGV[1]  floor to raise to (tid; entries at or below it are dropped)
  ARGV[2]  maxLen
  ARGV[3]  'ready' to mark the inbox ready and refresh its time to live, '' to leave the state
  ARGV[4]  time to live of the state, ms (with 'ready')
  ARGV[5]  extra life of the inbox over its state, ms (also for an inbox this merge creates)
  ARGV[6..] tids
  returns  1, or 0 when the inbox was not prepared
  One rewrite of the inbox (rebuilds and follow backfills are rare next to pushes).
]]
--- @include "includes/ring-merge"
--- @include "includes/inherit-ttl"

local cur = redis.call('HGET', KEYS[2], 'floor')
if not cur then return 0 end
local floor = tonumber(cur)
if tonumber(ARGV[1]) > floor then
  floor = tonumber(ARGV[1])
  redis.call('HSET', KEYS[2], 'floor', ARGV[1])
end
local fresh = {}
for i = 6, #ARGV do fresh[#fresh + 1] = tonumber(ARGV[i]) end
ringMerge(ringOpen(KEYS[1]), KEYS[2], fresh, tonumber(ARGV[2]), floor) -- drops entries at or below the floor
if ARGV[3] == 'ready' then
  redis.call('HSET', KEYS[2], 'state', 'ready')
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[5]))
end
inheritTtl(KEYS[1], KEYS[2], tonumber(ARGV[5]))
return 1
