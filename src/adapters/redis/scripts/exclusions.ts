/**
 * Lua scripts of the exclusions' hot state (design note 5) on stock Redis. Every script touches the
 * keys of ONE reader, which share the hash tag `{u:<reader>}` (keys.ts), so each is one slot.
 * Time is the engine's (virtual) `now`; real `PEXPIRE`s free the memory of idle readers.
 */
import { defineScript } from '../client.js';

/** exViews-2: note 5's LPUSH + LTRIM + EXPIRE for one reader, with the view time kept beside the LIST. */
export const exViews = defineScript(
  'exViews',
  2,
  `--[[ exViews-2: record counted views of one reader (note 5)
  KEYS[1]   the reader's recent views LIST (newest first)
  KEYS[2]   virtual ms of the reader's last view (string)
  ARGV[1]   now, virtual epoch ms;  ARGV[2] N (kept entries);  ARGV[3] ttl ms
  ARGV[4..] item ids, oldest view first
  returns   the LIST's length
  A LIST whose last view is ttl or more before now is dropped first (it had expired in virtual time).
]]
local now, n, ttl = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local at = tonumber(redis.call('GET', KEYS[2]))
if at == nil or now - at >= ttl then
  redis.call('DEL', KEYS[1])
  at = now
end
for i = 4, #ARGV do redis.call('LPUSH', KEYS[1], ARGV[i]) end
redis.call('LTRIM', KEYS[1], 0, n - 1)
if now > at then at = now end
redis.call('SET', KEYS[2], string.format('%d', at), 'PX', ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
return redis.call('LLEN', KEYS[1])
`,
);

/** exRead-4: everything a feed request needs of one reader, in one round trip. */
export const exRead = defineScript(
  'exRead',
  4,
  `--[[ exRead-4: a reader's recent views and cached durable exclusions
  KEYS[1]   recent views LIST;  KEYS[2] its last-view time;  KEYS[3] cached durable exclusions (JSON)
  KEYS[4]   the cache's generation
  ARGV[1]   now, virtual epoch ms;  ARGV[2] recent-views ttl ms
  returns   { views (array, newest first; empty once expired in virtual time), json or false, generation }
]]
local at = tonumber(redis.call('GET', KEYS[2]))
local views = {}
if at ~= nil and tonumber(ARGV[1]) - at < tonumber(ARGV[2]) then views = redis.call('LRANGE', KEYS[1], 0, -1) end
return { views, redis.call('GET', KEYS[3]), redis.call('GET', KEYS[4]) or '0' }
`,
);

/** exFill-2: caches durable exclusions unless an invalidation happened since they were read. */
export const exFill = defineScript(
  'exFill',
  2,
  `--[[ exFill-2: compare-and-set of a reader's cached durable exclusions
  KEYS[1]   cached durable exclusions;  KEYS[2] generation
  ARGV[1]   the generation the loader read;  ARGV[2] JSON;  ARGV[3] ttl ms
  returns   1 stored, 0 refused (invalidated meanwhile)
]]
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1
`,
);

/** exInvalidate-2: drops the cached durable exclusions and bumps the generation. */
export const exInvalidate = defineScript(
  'exInvalidate',
  2,
  `--[[ exInvalidate-2: after a durable write (engagement, feedback, block)
  KEYS[1]   cached durable exclusions;  KEYS[2] generation
  ARGV[1]   generation ttl ms (longer than the cache's, so a load in flight always sees the bump)
  returns   the new generation
]]
redis.call('DEL', KEYS[1])
local g = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return g
`,
);
