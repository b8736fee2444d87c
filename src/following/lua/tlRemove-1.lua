--[[ tlRemove-1: remove tids from an inbox or outbox (unfollow, block, lazy removal of deleted items)
  KEYS[1]  the inbox or outbox (a ring of packed tids: includes/ring.lua)
  ARGV[1..] tids (decimal; absent ones are ignored)
  returns  how many entries were removed
  One rewrite when something is removed (unfollows and deletions are rare next to pushes); removing
  the last entry deletes the key. The state HASH is left alone: an inbox emptied this way is complete.
]]
--- @include "includes/ring"

local b = ringOpen(KEYS[1])
if b.n == 0 then return 0 end
local drop = {}
for i = 1, #ARGV do drop[tonumber(ARGV[i])] = true end
local kept = {}
for _, t in ipairs(decodeAll(b)) do
  if not drop[t] then kept[#kept + 1] = t end
end
local removed = b.n - #kept
if removed > 0 then ringWrite(KEYS[1], kept, #kept) end
return removed
