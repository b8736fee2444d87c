--[[ ntCount-2: how many groups of a recipient's view have their newest event above a marker
  KEYS[1]  the view's groups ZSET (see ntAdd-2)
  KEYS[2]  the view's data HASH (see ntAdd-2)
  ARGV[1]  the marker: an event id (exclusive lower bound)
  returns  false when the view is not ready; else { count, truncated ('1' or '') }
]]
if redis.call('HGET', KEYS[2], '.s') ~= 'ready' then return false end
return { redis.call('ZCOUNT', KEYS[1], '(' .. ARGV[1], '+inf'), redis.call('HGET', KEYS[2], '.t') or '' }
