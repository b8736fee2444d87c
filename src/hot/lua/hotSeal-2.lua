--[[ hotSeal-2: the shard holds all its state again
  KEYS[1]  epoch   KEYS[2]  restored
  ARGV[1]  a new epoch token
  returns  1
]]
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
