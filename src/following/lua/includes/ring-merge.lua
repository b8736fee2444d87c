--[[ ring-merge: merge tids into a box by one rewrite (rebuilds, backfills, a lowered maxLen).
  ringMerge(b, hkey, fresh, maxLen, floor) merges the numbers of `fresh` (any order, repeats allowed)
  that are above `floor` with the entries of box b, keeps the newest maxLen, raises the floor (HASH
  hkey) to the highest tid dropped, and rewrites the box with exactly as many slots as entries.
  Returns the floor after the trim.
]]
--- @include "ring"

local function ringMerge(b, hkey, fresh, maxLen, floor)
  local add = {}
  for _, t in ipairs(fresh) do
    if t > floor then add[#add + 1] = t end
  end
  table.sort(add)
  local old = decodeAll(b)
  local merged, i, j = {}, 1, 1
  while i <= #old or j <= #add do
    local a, c = old[i], add[j]
    local t
    if c == nil or (a ~= nil and a <= c) then
      t = a
      i = i + 1
    else
      t = c
      j = j + 1
    end
    if t > floor and merged[#merged] ~= t then merged[#merged + 1] = t end
  end
  local over = #merged - maxLen
  if over > 0 then
    floor = raiseFloor(hkey, floor, merged[over]) -- ascending: the last one dropped is the highest
    local kept = {}
    for k = over + 1, #merged do kept[k - over] = merged[k] end
    merged = kept
  end
  ringWrite(b.key, merged, #merged)
  return floor
end
