--[[ ntPage-2: a page of a recipient's grouped view, newest group first
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  upper bound of the groups' newest event id, exclusive ('(<id>') or '+inf'
  ARGV[2]  most groups
  ARGV[3]  time to live of both keys, ms (a read keeps the view)
  returns  false when the view is not ready; else { truncated ('1' or ''), key, id, data, key, id, data, … }
]]
local z, h = KEYS[1], KEYS[2]
if redis.call('HGET', h, '.s') ~= 'ready' then return false end
local rows = redis.call('ZREVRANGEBYSCORE', z, ARGV[1], '-inf', 'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[2]))
local out = { redis.call('HGET', h, '.t') or '' }
if #rows > 0 then
  local keys = {}
  for i = 1, #rows, 2 do keys[#keys + 1] = rows[i] end
  local data = redis.call('HMGET', h, unpack(keys))
  for i = 1, #keys do
    out[#out + 1] = keys[i]
    out[#out + 1] = rows[2 * i]
    out[#out + 1] = data[i] or ''
  end
end
redis.call('PEXPIRE', z, ARGV[3])
redis.call('PEXPIRE', h, ARGV[3])
return out
