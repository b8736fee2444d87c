--[[ exInvalidate-2: after a durable write (engagement, feedback, block)
  KEYS[1]   cached durable exclusions;  KEYS[2] generation
  ARGV[1]   generation ttl ms (longer than the cache's, so a load in flight always sees the bump)
  returns   the new generation
]]
redis.call('DEL', KEYS[1])
local g = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return g
