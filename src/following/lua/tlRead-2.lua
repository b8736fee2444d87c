--[[ tlRead-2: a range of tids with the state and floor
  KEYS[1]  the inbox or outbox (a ring of packed tids: includes/ring.lua)
  KEYS[2]  its state HASH
  ARGV[1]  exclusive upper bound, a tid ('' for none)
  ARGV[2]  exclusive lower bound, a tid (0 for none)
  ARGV[3]  count
  returns  { state or '', floor or '' (no state: missing), tids } where tids is the packed string of
           the newest `count` entries strictly inside the bounds, ASCENDING (7 bytes each; the adapter
           reverses them). Each bound is an exponential search from the newest entry, so a first page
           or a since_id poll near the top costs a few 7-byte GETRANGEs, a deep max_id O(log n).
]]
--- @include "includes/ring"

local st = redis.call('HMGET', KEYS[2], 'state', 'floor')
local b = ringOpen(KEYS[1])
local hi = b.n
if ARGV[1] ~= '' then hi = countBelow(b, tonumber(ARGV[1])) end -- entries below the upper bound
local lo = 0
if tonumber(ARGV[2]) > 0 then lo = countBelow(b, tonumber(ARGV[2]) + 1) end -- entries at or below the lower
local first = math.max(lo + 1, hi - tonumber(ARGV[3]) + 1)
local tids = ''
if first <= hi then tids = readRange(b, first, hi) end
return { st[1] or '', st[2] or '', tids }
