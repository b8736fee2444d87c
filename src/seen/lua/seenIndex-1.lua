--[[ seenIndex-1: add a reader to its shard's dirty-reader set (its journal was just started)
  KEYS[1]   the shard's dirty-reader SET
  ARGV[1]   the reader id
  ARGV[2]   time to live, ms: the set's is extended to it, never shortened
  returns   1
]]
redis.call('SADD', KEYS[1], ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1
