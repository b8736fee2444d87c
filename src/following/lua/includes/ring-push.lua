--[[ ring-push: add one tid to a box, trimming it to maxLen in the same step.
  ringPush(key, hkey, t, maxLen, floor) adds t (a number above `floor`) to the box at key unless it is
  there, keeps the newest maxLen entries and raises the floor (HASH hkey) to the highest tid dropped.
  Returns the floor after the push, and true when this push created the key or converted it from an
  earlier version's ZSET (the caller then gives it its state's time to live if it has none).
  The common case -- t newer than every entry (the header's top) -- writes one slot and the header; a full ring first
  drops its oldest entry (h moves on). An older t shifts the entries above it up by one slot (a few
  bytes for a late fan-out). A box with no free slot below maxLen grows by a quarter (at least 16
  slots) in one rewrite, so growing costs O(1) per push amortized and wastes at most a quarter.
]]
--- @include "ring-merge"

local function ringPush(key, hkey, t, maxLen, floor)
  local b = ringOpen(key)
  local fresh = b.converted == true
  if b.P > maxLen then -- maxLen was lowered since the box was written: one rewrite trims it
    return ringMerge(b, hkey, { t }, maxLen, floor), fresh
  end
  local pos = countBelow(b, t)
  if pos < b.n and tidAt(b, pos + 1) == t then return floor, fresh end
  if b.n == maxLen then
    if pos == 0 then return raiseFloor(hkey, floor, t), fresh end -- t is the oldest of maxLen + 1
    floor = raiseFloor(hkey, floor, tidAt(b, 1))
    b.h = (b.h + 1) % b.P
    b.n = b.n - 1
    pos = pos - 1
  elseif b.n == b.P then
    local list = decodeAll(b)
    table.insert(list, pos + 1, t)
    ringWrite(key, list, math.min(maxLen, #list + math.max(16, math.ceil(#list / 4))))
    return floor, fresh or b.P == 0
  end
  if pos < b.n then writeRange(b, pos + 2, readRange(b, pos + 1, b.n)) end
  writeRange(b, pos + 1, packTid(t))
  b.n = b.n + 1
  if t > b.top then b.top = t end
  writeHeader(b)
  return floor, fresh
end
