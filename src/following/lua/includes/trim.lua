--[[ trim: keep the newest maxLen entries of an inbox or outbox and raise its floor.
  trim(zkey, hkey, maxLen, floor) pops the lowest tids of ZSET zkey beyond maxLen; when the highest
  one removed is above `floor` (a number) it becomes the floor, stored in HASH hkey ('floor').
  Returns the floor after the trim. Every script that adds entries trims in the same step.
]]
local function trim(zkey, hkey, maxLen, floor)
  local over = redis.call('ZCARD', zkey) - maxLen
  if over > 0 then
    -- ZPOPMIN returns member, score pairs, lowest first: the last member is the highest removed
    local popped = redis.call('ZPOPMIN', zkey, over)
    local top = popped[#popped - 1]
    if tonumber(top) > floor then
      floor = tonumber(top)
      redis.call('HSET', hkey, 'floor', top)
    end
  end
  return floor
end
