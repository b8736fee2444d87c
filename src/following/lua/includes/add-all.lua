--[[ add-all: add tids above the floor to an inbox or outbox, then trim it.
  addAll(zkey, hkey, maxLen, floor, first, last) ZADDs ARGV[first..last] (member = score = tid)
  that are above `floor` (a number), 1000 arguments per ZADD, then calls trim. Returns the floor
  after the trim.
]]
--- @include "trim"

local function addAll(zkey, hkey, maxLen, floor, first, last)
  local args = {}
  for i = first, last do
    if tonumber(ARGV[i]) > floor then
      args[#args + 1] = ARGV[i]
      args[#args + 1] = ARGV[i]
      if #args >= 1000 then redis.call('ZADD', zkey, unpack(args)); args = {} end
    end
  end
  if #args > 0 then redis.call('ZADD', zkey, unpack(args)) end
  return trim(zkey, hkey, maxLen, floor)
end
