--[[ tlAppendOutbox-2: add a tid to an author's outbox, trim it, refresh its time to live
  KEYS[1]  the outbox (a ring of packed tids: includes/ring.lua)
  KEYS[2]  its state (HASH floor)
  ARGV[1]  maxLen
  ARGV[2]  the tid
  ARGV[3]  time to live of the state, ms (refreshed by every append: an author who stops publishing
           loses its outbox after this)
  ARGV[4]  extra life of the outbox over its state, ms (the state always expires first)
  ARGV[5]  the floor of a new outbox: the tid - 1 (a first publish, or an outbox that expired or
           was lost: older tids may be missing, PostgreSQL answers below it)
  returns  the outbox floor after the write (decimal)
  A missing state reads as "nothing trusted" (src/following/adapters/redis-timeline-store.ts), so an
  outbox that expired or was lost never passes for a complete, empty one.
]]
--- @include "includes/ring-push"

local cur = redis.call('HGET', KEYS[2], 'floor')
local floor
if cur then
  floor = tonumber(cur)
else
  floor = tonumber(ARGV[5])
  redis.call('HSET', KEYS[2], 'floor', ARGV[5])
end
local t = tonumber(ARGV[2])
if t > floor then floor = ringPush(KEYS[1], KEYS[2], t, tonumber(ARGV[1]), floor) end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]) + tonumber(ARGV[4]))
return string.format('%d', floor)
