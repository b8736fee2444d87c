--[[ tlTouch-2: refresh the time to live of a ready inbox
  KEYS[1]  the inbox
  KEYS[2]  its state HASH
  ARGV[1]  time to live of the state, ms
  ARGV[2]  extra life of the inbox over its state, ms
  returns  1 when the state existed, else 0
]]
if redis.call('PEXPIRE', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return 1
