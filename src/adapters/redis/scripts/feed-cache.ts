/**
 * Lua scripts of the Redis feed cache (note 1's `feed:cache:{reader}` LIST and its refresh lease).
 * Each touches one key, so they run on any Cluster node holding the reader's slot.
 */
import { defineScript } from '../client.js';

/** feedReplace-1: replaces a reader's cached ids atomically (no reader sees a half-written list). */
export const feedReplace = defineScript(
  'feedReplace',
  1,
  `--[[ feedReplace-1: DEL the list, RPUSH the new ids in chunks, PEXPIRE it
  KEYS[1]     the reader's page cache (a LIST of item ids)
  ARGV[1]     time to live in ms
  ARGV[2..]   the new ids, head first (none: the cache is just dropped)
  returns     the new length
]]
local key = KEYS[1]
redis.call('DEL', key)
local n = #ARGV
if n < 2 then return 0 end
local chunk = 1000
for i = 2, n, chunk do
  local j = i + chunk - 1
  if j > n then j = n end
  redis.call('RPUSH', key, unpack(ARGV, i, j))
end
redis.call('PEXPIRE', key, ARGV[1])
return n - 1
`,
);

/** feedPop-1: pops up to `count` ids from the head and says how many are left (one round trip). */
export const feedPop = defineScript(
  'feedPop',
  1,
  `--[[ feedPop-1: LPOP key count, then LLEN
  KEYS[1]     the reader's page cache (a LIST of item ids)
  ARGV[1]     count (>= 1)
  returns     { remaining, id1, id2, ... } (just { 0 } when the list is missing or empty)
]]
local popped = redis.call('LPOP', KEYS[1], ARGV[1])
local left = redis.call('LLEN', KEYS[1])
if not popped then return { left } end
table.insert(popped, 1, left)
return popped
`,
);

/** leaseRelease-1: compare-and-delete, so a holder whose lease expired never frees a newer holder's. */
export const leaseRelease = defineScript(
  'leaseRelease',
  1,
  `--[[ leaseRelease-1: delete the lease only if it still holds the caller's token
  KEYS[1]     the reader's refresh lease (a string holding the holder's token)
  ARGV[1]     the caller's token
  returns     1 when released, 0 when the lease was gone or held by another token
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`,
);
