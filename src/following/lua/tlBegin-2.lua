--[[ tlBegin-2: mark the inbox as building (pushes land from now on), keep its floor
  KEYS[1]  the inbox
  KEYS[2]  its state HASH
  ARGV[1]  time to live of the state, ms (the inbox lives ARGV[2] ms longer)
  ARGV[2]  extra life of the inbox over its state, ms
  returns  1
]]
redis.call('HSET', KEYS[2], 'state', 'building')
redis.call('HSETNX', KEYS[2], 'floor', '0')
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return 1
