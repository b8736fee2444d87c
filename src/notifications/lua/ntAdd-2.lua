--[[ ntAdd-2: count one recorded notification event into its group of a recipient's grouped view
  KEYS[1]  the view's groups: a ZSET, member = group key, score = the group's newest event id
  KEYS[2]  the view's data: a HASH, field <group key> = "<count>|<newest at ms>|<actor> <actor> <actor>"
           (recent actors newest first), field '.s' = state ('ready', 'b:<token>' building, 'd:<token>'
           dirty: a write came during the rebuild), field '.t' = '1' when older groups were dropped
  ARGV[1]  group key
  ARGV[2]  event id
  ARGV[3]  event time, epoch ms
  ARGV[4]  actor id
  ARGV[5]  most groups kept
  ARGV[6]  time to live of both keys, ms
  returns  1 when a ready view took the event; 0 when there is none (nothing written) or it is being
           rebuilt (marked dirty: the rebuild will not complete, and the read rebuilds again)
  O(1) in the group's size: one field read and written, one ZADD; a new group also renews both keys'
  time to live and, past the bound, pops the oldest groups. (Reads renew the time to live too: ntPage-2.)
]]
local z, h = KEYS[1], KEYS[2]
local state = redis.call('HGET', h, '.s')
if not state then return 0 end
if string.sub(state, 1, 2) == 'b:' then
  redis.call('HSET', h, '.s', 'd:' .. string.sub(state, 3))
  return 0
end
if state ~= 'ready' then return 0 end

local gk, id, at, actor = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]
local count, latest, actors = 0, 0, {}
local v = redis.call('HGET', h, gk)
if v then
  local c, t, a = string.match(v, '^(%d+)|(%d+)|(.*)$')
  count, latest = tonumber(c), tonumber(t)
  for x in string.gmatch(a, '%S+') do actors[#actors + 1] = x end
end
local out = { actor }
for _, x in ipairs(actors) do
  if x ~= actor and #out < 3 then out[#out + 1] = x end
end
if at > latest then latest = at end
redis.call('HSET', h, gk, string.format('%d|%d|%s', count + 1, latest, table.concat(out, ' ')))
redis.call('ZADD', z, 'GT', id, gk)
-- an existing group neither grows the view nor needs its life renewed here (reads renew it): a like of
-- a popular post costs the field read and write and the ZADD only
if v then return 1 end

local max = tonumber(ARGV[5])
local n = redis.call('ZCARD', z)
if n > max then
  local old = redis.call('ZRANGE', z, 0, n - max - 1)
  redis.call('ZREMRANGEBYRANK', z, 0, n - max - 1)
  redis.call('HDEL', h, unpack(old))
  redis.call('HSET', h, '.t', '1')
end
redis.call('PEXPIRE', z, ARGV[6])
redis.call('PEXPIRE', h, ARGV[6])
return 1
