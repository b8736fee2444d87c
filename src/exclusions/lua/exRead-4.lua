--[[ exRead-4: a reader's recent views and cached durable exclusions
  KEYS[1]   recent views LIST;  KEYS[2] its last-view time;  KEYS[3] cached durable exclusions (JSON)
  KEYS[4]   the cache's generation
  ARGV[1]   now, virtual epoch ms;  ARGV[2] recent-views ttl ms
  ARGV[3]   the head of the cached JSON the caller already holds parsed ('' when none): `{"fill":"<id>",`
  returns   { views (array, newest first; empty once expired in virtual time),
              the JSON, or false (not cached), or 1 (the cached JSON starts with ARGV[3]: the caller's copy
              is current, and 62 KB of a full document do not cross the wire again),
              generation }
]]
local at = tonumber(redis.call('GET', KEYS[2]))
local views = {}
if at ~= nil and tonumber(ARGV[1]) - at < tonumber(ARGV[2]) then views = redis.call('LRANGE', KEYS[1], 0, -1) end
local cached
if ARGV[3] ~= '' and redis.call('GETRANGE', KEYS[3], 0, #ARGV[3] - 1) == ARGV[3] then
  cached = 1
else
  cached = redis.call('GET', KEYS[3])
end
return { views, cached, redis.call('GET', KEYS[4]) or '0' }
