--[[ ntComplete-2: write a rebuilt grouped view, unless a write came while it was built
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  the rebuild's token (ntBegin-2)
  ARGV[2]  time to live of both keys, ms
  ARGV[3]  '1' when the store holds older groups than these, else ''
  ARGV[4..] the groups as triples: key, newest event id, data ("<count>|<newest at>|<actors>")
  returns  1 when written (the view is ready); 0 when the state is no longer this rebuild's building
           state (a write marked it dirty, or another rebuild began): nothing written
]]
local z, h = KEYS[1], KEYS[2]
if redis.call('HGET', h, '.s') ~= 'b:' .. ARGV[1] then return 0 end
redis.call('DEL', z, h)
for i = 4, #ARGV, 3 do
  redis.call('ZADD', z, ARGV[i + 1], ARGV[i])
  redis.call('HSET', h, ARGV[i], ARGV[i + 2])
end
redis.call('HSET', h, '.s', 'ready')
if ARGV[3] == '1' then redis.call('HSET', h, '.t', '1') end
redis.call('PEXPIRE', h, ARGV[2])
if #ARGV >= 4 then redis.call('PEXPIRE', z, ARGV[2]) end
return 1
