/**
 * Lua scripts of the following timeline (note 4): inboxes and outboxes are ZSETs whose members and
 * scores are tids (exact integers < 2^53, so Lua's doubles hold them exactly); each has a state HASH
 * with its `floor` (and, for inboxes, `state` = building | ready). Every script that adds entries trims
 * the ZSET to its newest `maxLen` and raises the floor to the highest tid it removed, in the same step.
 *
 * All keys of one call share one hash tag `{u:<id>}` — except tlPush-2N on a standalone server, which
 * takes many readers at once (the adapter sends one reader per call on a Cluster).
 */
import { defineScript } from '../client.js';

/** Shared Lua: add tids above the floor, trim to maxLen, store the raised floor. */
const ADD_AND_TRIM = `
local function trim(zkey, hkey, maxLen, floor)
  local over = redis.call('ZCARD', zkey) - maxLen
  if over > 0 then
    local popped = redis.call('ZPOPMIN', zkey, over)
    local top = popped[#popped - 1]
    if tonumber(top) > floor then
      floor = tonumber(top)
      redis.call('HSET', hkey, 'floor', top)
    end
  end
  return floor
end
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
`;

/** tlPush-2N: one tid into N prepared inboxes. */
export const tlPush = defineScript(
  'tlPush',
  'variable',
  `--[[ tlPush-2N: push one tid into the prepared inboxes of N readers (fan-out on write)
  KEYS[2i-1]  reader i's inbox (ZSET of tids)
  KEYS[2i]    reader i's inbox state (HASH state, floor); absent = no inbox: skipped
  ARGV[1]     the tid (decimal)
  ARGV[2]     maxLen, entries kept per inbox
  returns     how many inboxes received the tid (prepared, and tid above their floor)
]]
local tid = ARGV[1]
local t = tonumber(tid)
local maxLen = tonumber(ARGV[2])
local n = 0
for i = 1, #KEYS, 2 do
  local floor = redis.call('HGET', KEYS[i + 1], 'floor')
  if floor and t > tonumber(floor) then
    redis.call('ZADD', KEYS[i], tid, tid)
    local over = redis.call('ZCARD', KEYS[i]) - maxLen
    if over > 0 then
      -- ZPOPMIN returns member, score pairs, lowest first: the last member is the highest removed
      local popped = redis.call('ZPOPMIN', KEYS[i], over)
      local top = popped[#popped - 1]
      if tonumber(top) > tonumber(floor) then redis.call('HSET', KEYS[i + 1], 'floor', top) end
    end
    n = n + 1
  end
end
return n
`,
);

/** tlAppendOutbox-2: one tid into an author's outbox. */
export const tlAppendOutbox = defineScript(
  'tlAppendOutbox',
  2,
  `--[[ tlAppendOutbox-2: add a tid to an author's outbox, trim it
  KEYS[1]  the outbox (ZSET of tids)
  KEYS[2]  its state (HASH floor)
  ARGV[1]  maxLen
  ARGV[2]  the tid
  returns  the outbox floor after the write
]]${ADD_AND_TRIM}
local floor = tonumber(redis.call('HGET', KEYS[2], 'floor') or '0')
if floor == 0 then redis.call('HSETNX', KEYS[2], 'floor', '0') end
return tostring(addAll(KEYS[1], KEYS[2], tonumber(ARGV[1]), floor, 2, 2))
`,
);

/** tlRead-2: state, floor and a range of an inbox or outbox in one round trip. */
export const tlRead = defineScript(
  'tlRead',
  2,
  `--[[ tlRead-2: a range of tids with the state and floor
  KEYS[1]  the ZSET (inbox or outbox)
  KEYS[2]  its state HASH
  ARGV[1]  upper bound, ZRANGE BYSCORE syntax ('(123' or '+inf')
  ARGV[2]  lower bound ('(45')
  ARGV[3]  count
  returns  { state or '', floor or '0', tid1, tid2, ... } newest first
]]
local st = redis.call('HMGET', KEYS[2], 'state', 'floor')
local out = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'BYSCORE', 'REV', 'LIMIT', 0, ARGV[3])
table.insert(out, 1, st[2] or '0')
table.insert(out, 1, st[1] or '')
return out
`,
);

/** tlBegin-2: prepare an inbox for a rebuild. */
export const tlBegin = defineScript(
  'tlBegin',
  2,
  `--[[ tlBegin-2: mark the inbox as building (pushes land from now on), keep its floor
  KEYS[1]  the inbox
  KEYS[2]  its state HASH
  ARGV[1]  time to live of the state, ms (the inbox lives ARGV[2] ms longer)
  ARGV[2]  extra life of the inbox over its state, ms
  returns  1
]]
redis.call('HSET', KEYS[2], 'state', 'building')
redis.call('HSETNX', KEYS[2], 'floor', '0')
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return 1
`,
);

/** tlMerge-2: merge tids into an inbox (rebuild completion or follow backfill). */
export const tlMerge = defineScript(
  'tlMerge',
  2,
  `--[[ tlMerge-2: merge tids into a prepared inbox, raise its floor, trim; optionally mark it ready
  KEYS[1]  the inbox
  KEYS[2]  its state HASH (absent: nothing is written)
  ARGV[1]  floor to raise to (tid; entries at or below it are dropped)
  ARGV[2]  maxLen
  ARGV[3]  'ready' to mark the inbox ready and refresh its time to live, '' to leave the state
  ARGV[4]  time to live of the state, ms (with 'ready')
  ARGV[5]  extra life of the inbox over its state, ms
  ARGV[6..] tids
  returns  1, or 0 when the inbox was not prepared
]]${ADD_AND_TRIM}
local cur = redis.call('HGET', KEYS[2], 'floor')
if not cur then return 0 end
local floor = tonumber(cur)
if tonumber(ARGV[1]) > floor then
  floor = tonumber(ARGV[1])
  redis.call('HSET', KEYS[2], 'floor', ARGV[1])
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
end
addAll(KEYS[1], KEYS[2], tonumber(ARGV[2]), floor, 6, #ARGV)
if ARGV[3] == 'ready' then
  redis.call('HSET', KEYS[2], 'state', 'ready')
  redis.call('PEXPIRE', KEYS[2], ARGV[4])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]) + tonumber(ARGV[5]))
end
return 1
`,
);

/** tlTouch-2: refresh the time to live of an inbox and its state. */
export const tlTouch = defineScript(
  'tlTouch',
  2,
  `--[[ tlTouch-2: refresh the time to live of a ready inbox
  KEYS[1]  the inbox
  KEYS[2]  its state HASH
  ARGV[1]  time to live of the state, ms
  ARGV[2]  extra life of the inbox over its state, ms
  returns  1 when the state existed, else 0
]]
if redis.call('PEXPIRE', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]))
return 1
`,
);
