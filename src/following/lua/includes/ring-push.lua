--[[ ring-push: add one tid to a box, trimming it to maxLen in the same step.
  ringPush(key, hkey, t, maxLen, floor) adds t (a number above `floor`) to the box at key unless it is
  there, keeps the newest maxLen entries and raises the floor (HASH hkey) to the highest tid dropped.
  Returns the floor after the push, and true when this push created the key or converted it from an
  earlier version's ZSET (the caller then gives it its state's time to live if it has none).
  The common case -- t newer than every entry (the header's top) -- writes one slot and the header; a
  full ring first drops its oldest entry (h moves on). An older t (fan-out jobs finishing out of order)
  is placed with one read of the newest WINDOW = 16 entries when it lands among them -- the entries above it
  move up one slot in the same write as t -- and by a search of the whole ring otherwise. A box with no
  free slot below maxLen grows by a quarter (at least 16 slots) in one rewrite, so growing costs O(1)
  per push amortized and wastes at most a quarter.
]]
--- @include "ring-merge"

-- newest entries read at once to place a late tid (112 bytes)
local WINDOW = 16

-- Where t goes: how many entries are below it, and the packed entries above it (nil: t is there).
local function placeOf(b, t)
  if b.n == 0 or b.top < t then return b.n, '' end
  local w = math.min(WINDOW, b.n)
  local win = readRange(b, b.n - w + 1, b.n)
  local i = w
  while i >= 1 and struct.unpack('>I7', win, (i - 1) * W + 1) >= t do i = i - 1 end
  local pos, above
  if i == 0 and w < b.n then
    pos = countBetween(b, t, 0, b.n - w + 1) -- deeper than the window: a binary search below it
    if tidAt(b, pos + 1) == t then return pos, nil end -- a repeated push (a retried job): nothing to read
    above = readRange(b, pos + 1, b.n)
  else
    pos = b.n - w + i
    above = win:sub(i * W + 1)
  end
  if struct.unpack('>I7', above, 1) == t then return pos, nil end
  return pos, above
end

local function ringPush(key, hkey, t, maxLen, floor)
  local b = ringOpen(key)
  local fresh = b.converted == true
  if b.P > maxLen then -- maxLen was lowered since the box was written: one rewrite trims it
    return ringMerge(b, hkey, { t }, maxLen, floor), fresh
  end
  local pos, above = placeOf(b, t)
  if above == nil then return floor, fresh end
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
  writeRange(b, pos + 1, packTid(t) .. above) -- t, and the entries above it one slot up
  b.n = b.n + 1
  if t > b.top then b.top = t end
  writeHeader(b)
  return floor, fresh
end
