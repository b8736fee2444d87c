--[[ feedPop-1: LPOP key count, then LLEN
  KEYS[1]     the reader's page cache (a LIST of item ids)
  ARGV[1]     count (>= 1)
  returns     { remaining, id1, id2, ... } (just { 0 } when the list is missing or empty)
]]
local popped = redis.call('LPOP', KEYS[1], ARGV[1])
local left = redis.call('LLEN', KEYS[1])
if not popped then return { left } end
table.insert(popped, 1, left)
return popped
