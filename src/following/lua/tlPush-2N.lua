--[[ tlPush-2N: push one tid into the prepared inboxes of N readers (fan-out on write)
  KEYS[2i-1]  reader i's inbox (a ring of packed tids: includes/ring.lua)
  KEYS[2i]    reader i's inbox state (HASH state, floor); absent = no inbox: skipped
  ARGV[1]     the tid (decimal)
  ARGV[2]     maxLen, entries kept per inbox
  ARGV[3]     extra life of an inbox over its state, ms (an inbox this push creates gets the state's
              time to live plus this)
  returns     how many inboxes received the tid (prepared, and tid above their floor)
  Inboxes and outboxes are rings of 7-byte tids (includes/ring.lua), each with a state HASH holding its
  floor (and, for inboxes, state = building | ready). All keys of one call share one hash tag {u:<id>}
  -- except here on a standalone server, which takes many readers at once (the adapter sends one
  reader per call on a Cluster).
]]
--- @include "includes/ring-push"
--- @include "includes/inherit-ttl"

local t = tonumber(ARGV[1])
local maxLen = tonumber(ARGV[2])
local extra = tonumber(ARGV[3])
local n = 0
for i = 1, #KEYS, 2 do
  local floor = redis.call('HGET', KEYS[i + 1], 'floor')
  if floor and t > tonumber(floor) then
    local _, created = ringPush(KEYS[i], KEYS[i + 1], t, maxLen, tonumber(floor))
    if created then inheritTtl(KEYS[i], KEYS[i + 1], extra) end
    n = n + 1
  end
end
return n
