--[[ ntBegin-2: start rebuilding a recipient's grouped view from the store
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  the rebuild's token
  ARGV[2]  how long the building state may last, ms (a rebuild that dies leaves nothing behind)
  returns  1. What was there is dropped: the view is building until ntComplete-2 with this token.
]]
redis.call('DEL', KEYS[1], KEYS[2])
redis.call('HSET', KEYS[2], '.s', 'b:' .. ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
