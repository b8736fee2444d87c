--[[ ntRefill-2: replace a group's recent actors and newest event from the store (after ntRemove-2 said 'refill')
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  group key
  ARGV[2]  the group's newest event id (the store's)
  ARGV[3]  its time, epoch ms
  ARGV[4]  recent actors, newest first, space-separated
  returns  1 when the group was there (its count is kept), else 0
]]
local z, h = KEYS[1], KEYS[2]
if redis.call('HGET', h, '.s') ~= 'ready' then return 0 end
local v = redis.call('HGET', h, ARGV[1])
if not v then return 0 end
local c = string.match(v, '^(%d+)|')
redis.call('HSET', h, ARGV[1], string.format('%s|%s|%s', c, ARGV[3], ARGV[4]))
redis.call('ZADD', z, ARGV[2], ARGV[1])
return 1
