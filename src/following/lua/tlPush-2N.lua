--[[ tlPush-2N: push one tid into the prepared inboxes of N readers (fan-out on write)
  KEYS[2i-1]  reader i's inbox (ZSET of tids)
  KEYS[2i]    reader i's inbox state (HASH state, floor); absent = no inbox: skipped
  ARGV[1]     the tid (decimal)
  ARGV[2]     maxLen, entries kept per inbox
  ARGV[3]     extra life of an inbox over its state, ms (an inbox this push creates gets the state's
              time to live plus this)
  returns     how many inboxes received the tid (prepared, and tid above their floor)
  Inboxes and outboxes are ZSETs whose members and scores are tids (exact integers < 2^53, so Lua's
  doubles hold them exactly), each with a state HASH holding its floor (and, for inboxes, state =
  building | ready). All keys of one call share one hash tag {u:<id>} -- except here on a standalone
  server, which takes many readers at once (the adapter sends one reader per call on a Cluster).
]]
--- @include "includes/trim"
--- @include "includes/inherit-ttl"

local tid = ARGV[1]
local t = tonumber(tid)
local maxLen = tonumber(ARGV[2])
local extra = tonumber(ARGV[3])
local n = 0
for i = 1, #KEYS, 2 do
  local floor = redis.call('HGET', KEYS[i + 1], 'floor')
  if floor and t > tonumber(floor) then
    redis.call('ZADD', KEYS[i], tid, tid)
    trim(KEYS[i], KEYS[i + 1], maxLen, tonumber(floor))
    inheritTtl(KEYS[i], KEYS[i + 1], extra)
    n = n + 1
  end
end
return n
