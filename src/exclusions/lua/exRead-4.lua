--[[ exRead-4: a reader's recent views and cached durable exclusions
  KEYS[1]   recent views LIST;  KEYS[2] its last-view time;  KEYS[3] cached durable exclusions (JSON)
  KEYS[4]   the cache's generation
  ARGV[1]   now, virtual epoch ms;  ARGV[2] recent-views ttl ms
  returns   { views (array, newest first; empty once expired in virtual time), json or false, generation }
]]
local at = tonumber(redis.call('GET', KEYS[2]))
local views = {}
if at ~= nil and tonumber(ARGV[1]) - at < tonumber(ARGV[2]) then views = redis.call('LRANGE', KEYS[1], 0, -1) end
return { views, redis.call('GET', KEYS[3]), redis.call('GET', KEYS[4]) or '0' }
