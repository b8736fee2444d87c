--[[ ntRemove-2: take a retracted notification event (an undone like) out of its group
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  group key
  ARGV[2]  the event's id
  ARGV[3]  actor id
  returns  'ok'; 'refill' when the group's recent actors or newest event must be read from the store
           (the engine then runs ntRefill-2); 'absent' when there is no ready view (a building one is
           marked dirty)
  The count is exact: it is decremented here, and the group leaves the view when it reaches 0.
]]
local z, h = KEYS[1], KEYS[2]
local state = redis.call('HGET', h, '.s')
if not state then return 'absent' end
if string.sub(state, 1, 2) == 'b:' then
  redis.call('HSET', h, '.s', 'd:' .. string.sub(state, 3))
  return 'absent'
end
if state ~= 'ready' then return 'absent' end
local gk, id, actor = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local v = redis.call('HGET', h, gk)
if not v then return 'ok' end
local c, t, a = string.match(v, '^(%d+)|(%d+)|(.*)$')
local count = tonumber(c) - 1
if count <= 0 then
  redis.call('HDEL', h, gk)
  redis.call('ZREM', z, gk)
  return 'ok'
end
local before, actors = 0, {}
for x in string.gmatch(a, '%S+') do
  before = before + 1
  if x ~= actor then actors[#actors + 1] = x end
end
redis.call('HSET', h, gk, string.format('%d|%s|%s', count, t, table.concat(actors, ' ')))
local newest = tonumber(redis.call('ZSCORE', z, gk) or '0')
if #actors < math.min(before, count) or id >= newest then return 'refill' end
return 'ok'
