--[[ exFill-2: compare-and-set of a reader's cached durable exclusions
  KEYS[1]   cached durable exclusions;  KEYS[2] generation
  ARGV[1]   the generation the loader read;  ARGV[2] JSON;  ARGV[3] ttl ms
  returns   1 stored, 0 refused (invalidated meanwhile)
]]
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
