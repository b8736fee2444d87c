--[[ exViews-2: record views of one reader (docs/exclusions.md)
  KEYS[1]   the reader's recent views LIST (newest first, each item once)
  KEYS[2]   virtual ms of the reader's last view (string)
  ARGV[1]   now, virtual epoch ms;  ARGV[2] N (kept entries);  ARGV[3] ttl ms
  ARGV[4..] item ids, oldest view first
  returns   the LIST's length
  A LIST whose last view is ttl or more before now is dropped first (it had expired in virtual time). An item
  viewed again moves to the front (LREM, O(N) with N ≤ 1000), so repeats never push other items out.
]]
local now, n, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local at = tonumber(redis.call('GET', KEYS[2]))
if at == nil or now - at >= ttl then
  redis.call('DEL', KEYS[1])
  at = now
end
for i = 4, #ARGV do
  redis.call('LREM', KEYS[1], 0, ARGV[i])
  redis.call('LPUSH', KEYS[1], ARGV[i])
end
redis.call('LTRIM', KEYS[1], 0, n - 1)
if now > at then at = now end
redis.call('SET', KEYS[2], string.format('%d', at), 'PX', ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('LLEN', KEYS[1])
