/**
 * Lua scripts of the hot ranking (design note 2) on stock Redis ≥ 6.2. Every key of one call carries
 * the same hot-shard hash tag (`keys.hot(shard)`), so each call touches one Cluster slot. Time is
 * always an argument (`now`, epoch ms) — never Redis `TIME` — so replays and tests run on virtual time.
 *
 * hotView-9 is note 2's script ("原子更新脚本") with Freshet's additions folded into the same atomic
 * step: the item must be registered (no `publishedAt` → nothing written, instead of the note's
 * pub = 0), items past the retention are refused, the rate limit (`SET NX PX`) and the per-minute
 * budget run first, suspicious views go to their own counters, the score is returned as a string
 * (`%.17g`: a Lua number in a reply would be truncated to an integer), and the item is marked dirty
 * for the next checkpoint. The score expression is evaluated in the order of domain/hot.ts.
 */
import { defineScript } from '../client.js';

/** Verdict codes returned by hotView (mapped to `ViewVerdict` in one place, hot-counters.ts). */
export const VIEW_CODES = { counted: 1, repeat: 2, budget: 3, flagged: 4, expired: 5, unknown: -1 } as const;

/** hotView-9: one view — budget, rate limit, PV, UV, score, ranking — atomically. */
export const hotView = defineScript(
  'hotView',
  9,
  `--[[ hotView-9: record one view of an item by a visitor (note 2 + rate limit + isolation)
  KEYS[1]  counter:views:<id>          PV (INCRBY)
  KEYS[2]  hll:uv:<id>                 visitors (PFADD / PFCOUNT)
  KEYS[3]  hot:score                   the shard's ranking (ZSET)
  KEYS[4]  meta:article:<id>           HASH publishedAt = epoch seconds
  KEYS[5]  ratelimit:<id>:<visitor>    virtual ms of the visitor's last counted view of the item
  KEYS[6]  budget:<visitor>:<minute>   the visitor's views in this minute (on this shard)
  KEYS[7]  suspicious:<id>             HASH repeat / budget / flagged
  KEYS[8]  totals:suspicious           HASH repeat / budget / flagged of the shard
  KEYS[9]  checkpoint:dirty            SET of items viewed since the last checkpoint began
  ARGV[1]  item id        ARGV[2]  visitor id        ARGV[3]  now, epoch ms
  ARGV[4]  alpha          ARGV[5]  beta              ARGV[6]  base          ARGV[7]  gamma
  ARGV[8]  rate-limit window, ms     ARGV[9]  views per visitor per minute
  ARGV[10] '1' when the caller flagged the view      ARGV[11] retention, ms
  returns  { verdict, pv, uv, score } — verdict 1 counted, 2 repeat, 3 budget, 4 flagged,
           5 expired (past retention), -1 unknown item (nothing written, zeros); pv and uv after
           the view; score as a %.17g string ('0' when the item is not ranked)
]]
local pub = redis.call('HGET', KEYS[4], 'publishedAt')
if not pub then return { -1, 0, 0, '0' } end
pub = tonumber(pub)
local now = tonumber(ARGV[3])
local id = ARGV[1]

local function current(verdict)
  local pv = tonumber(redis.call('GET', KEYS[1]) or '0')
  local uv = redis.call('PFCOUNT', KEYS[2])
  return { verdict, pv, uv, redis.call('ZSCORE', KEYS[3], id) or '0' }
end
local function suspicious(verdict, kind)
  redis.call('HINCRBY', KEYS[7], kind, 1)
  redis.call('HINCRBY', KEYS[8], kind, 1)
  redis.call('SADD', KEYS[9], id)
  return current(verdict)
end

if now - pub * 1000 > tonumber(ARGV[11]) then return current(5) end
if ARGV[10] == '1' then return suspicious(4, 'flagged') end
local n = redis.call('INCR', KEYS[6])
if n == 1 then redis.call('PEXPIRE', KEYS[6], 120000) end
if n > tonumber(ARGV[9]) then return suspicious(3, 'budget') end
-- rate limit: SET NX PX holds the mark for the window on Redis's clock; the stored virtual time
-- decides when the mark is still there (virtual time may run faster than the wall clock)
local window = ARGV[8]
if not redis.call('SET', KEYS[5], ARGV[3], 'NX', 'PX', window) then
  local last = tonumber(redis.call('GET', KEYS[5]) or '0')
  if now < last or now - last < tonumber(window) then return suspicious(2, 'repeat') end
  redis.call('SET', KEYS[5], ARGV[3], 'PX', window)
end

-- note 2: PV, UV, hours since publication, score, ranking
local pv = redis.call('INCRBY', KEYS[1], 1)
redis.call('PFADD', KEYS[2], ARGV[2])
local uv = redis.call('PFCOUNT', KEYS[2])
local nowSec = now / 1000
local hours = 0
if nowSec > pub then hours = (nowSec - pub) / 3600 end
local denominator = math.pow(hours + tonumber(ARGV[6]), tonumber(ARGV[7]))
local score = 0
if denominator > 0 then score = (tonumber(ARGV[4]) * pv + tonumber(ARGV[5]) * uv) / denominator end
redis.call('ZADD', KEYS[3], score, id)
redis.call('SADD', KEYS[9], id)
return { 1, pv, uv, string.format('%.17g', score) }
`,
);

/** hotRescore-(1+3N): recomputes the scores of N ranked items at `now`; drops those without counters. */
export const hotRescore = defineScript(
  'hotRescore',
  'variable',
  `--[[ hotRescore-(1+3N): rescoring pass over N ranked items of one shard
  KEYS[1]          hot:score (ZSET)
  KEYS[2+3(i-1)]   counter:views:<id_i>    KEYS[3+3(i-1)] hll:uv:<id_i>    KEYS[4+3(i-1)] meta:article:<id_i>
  ARGV[1] now, epoch ms   ARGV[2..5] alpha, beta, base, gamma   ARGV[5+i] id_i
  returns { rescored, dropped } — an item without publishedAt or without a counted view is removed
          (ZREM); the others get ZADD XX with note 2's score at now (an item trimmed meanwhile stays out)
]]
local zset = KEYS[1]
local nowSec = tonumber(ARGV[1]) / 1000
local alpha, beta, base, gamma = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local rescored, dropped = 0, 0
for i = 1, #ARGV - 5 do
  local id = ARGV[5 + i]
  local k = 2 + 3 * (i - 1)
  local pub = redis.call('HGET', KEYS[k + 2], 'publishedAt')
  local pv = tonumber(redis.call('GET', KEYS[k]) or '0')
  if not pub or pv == 0 then
    dropped = dropped + redis.call('ZREM', zset, id)
  else
    pub = tonumber(pub)
    local uv = redis.call('PFCOUNT', KEYS[k + 1])
    local hours = 0
    if nowSec > pub then hours = (nowSec - pub) / 3600 end
    local denominator = math.pow(hours + base, gamma)
    local score = 0
    if denominator > 0 then score = (alpha * pv + beta * uv) / denominator end
    redis.call('ZADD', zset, 'XX', score, id)
    rescored = rescored + 1
  end
end
return { rescored, dropped }
`,
);

/**
 * Lua: `appendCounters(out, k, fourth)` appends one item's 7 values to `out` — publishedAt (s, -1 when
 * unregistered), pv, uv (PFCOUNT), `fourth()` (called after PFCOUNT), repeat, budget, flagged — from
 * KEYS[k..k+3] = counter:views, hll:uv, meta:article, suspicious. Shared by hotCounters and hotSnapshot.
 */
const APPEND_COUNTERS = `local function appendCounters(out, k, fourth)
  local pub = redis.call('HGET', KEYS[k + 2], 'publishedAt')
  local sus = redis.call('HMGET', KEYS[k + 3], 'repeat', 'budget', 'flagged')
  local n = #out
  out[n + 1] = tonumber(pub or '-1')
  out[n + 2] = tonumber(redis.call('GET', KEYS[k]) or '0')
  out[n + 3] = redis.call('PFCOUNT', KEYS[k + 1])
  out[n + 4] = fourth()
  out[n + 5] = tonumber(sus[1] or '0')
  out[n + 6] = tonumber(sus[2] or '0')
  out[n + 7] = tonumber(sus[3] or '0')
end`;

/** hotCounters-(1+4N): reads N items' counters in one round trip. */
export const hotCounters = defineScript(
  'hotCounters',
  'variable',
  `--[[ hotCounters-(1+4N): counters of N items of one shard
  KEYS[1]          hot:score (ZSET)
  KEYS[2+4(i-1)..] counter:views:<id_i>, hll:uv:<id_i>, meta:article:<id_i>, suspicious:<id_i>
  ARGV[i]          id_i
  returns          7 values per item: publishedAt (seconds, -1 when unregistered), pv, uv,
                   score ('' when unranked), repeat, budget, flagged
]]
${APPEND_COUNTERS}
local out = {}
for i = 1, #ARGV do
  appendCounters(out, 2 + 4 * (i - 1), function() return redis.call('ZSCORE', KEYS[1], ARGV[i]) or '' end)
end
return out
`,
);

/** hotSnapshot-(1+4N): a checkpoint read of N items, refused when the shard lost its state. */
export const hotSnapshot = defineScript(
  'hotSnapshot',
  'variable',
  `--[[ hotSnapshot-(1+4N): counters of N items of one shard, HLLs as raw strings
  KEYS[1]          epoch (present while the shard holds all its state)
  KEYS[2+4(i-1)..] counter:views:<id_i>, hll:uv:<id_i>, meta:article:<id_i>, suspicious:<id_i>
  returns          { 0 } when the epoch is missing (a lost shard: its counters are partial);
                   else { 1, then 7 values per item: publishedAt (-1 when unregistered), pv, uv,
                   hll ('' when none), repeat, budget, flagged }
]]
if redis.call('EXISTS', KEYS[1]) == 0 then return { 0 } end
${APPEND_COUNTERS}
local out = { 1 }
for i = 1, (#KEYS - 1) / 4 do
  local k = 2 + 4 * (i - 1)
  appendCounters(out, k, function() return redis.call('GET', KEYS[k + 1]) or '' end)
end
return out
`,
);

/** hotBeginCheckpoint-2: moves the dirty marks in flight. */
export const hotBeginCheckpoint = defineScript(
  'hotBeginCheckpoint',
  2,
  `--[[ hotBeginCheckpoint-2: dirty marks -> in-flight set (kept until each id is checkpointed)
  KEYS[1]  checkpoint:dirty      KEYS[2]  checkpoint:inflight
  returns  every in-flight id (what an earlier, failed checkpoint left there included)
]]
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('SUNIONSTORE', KEYS[2], KEYS[2], KEYS[1])
  redis.call('DEL', KEYS[1])
end
return redis.call('SMEMBERS', KEYS[2])
`,
);

/** hotRegister-N: sets publication times (optionally only of items already registered). */
export const hotRegister = defineScript(
  'hotRegister',
  'variable',
  `--[[ hotRegister-N: HSET meta:article:<id> publishedAt <seconds> (note 2's preparation step)
  KEYS[i]    meta:article:<id_i>
  ARGV[1]    '1': only update items already registered; ARGV[1+i] publishedAt of id_i, epoch seconds
  returns    how many were written
]]
local written = 0
for i = 1, #KEYS do
  if ARGV[1] ~= '1' or redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i], 'publishedAt', ARGV[1 + i])
    written = written + 1
  end
end
return written
`,
);

/** hotForget-(1+4N): removes N items from the ranking and drops their counters. */
export const hotForget = defineScript(
  'hotForget',
  'variable',
  `--[[ hotForget-(1+4N): ZREM from hot:score and DEL the counters, meta and suspicious counts
  KEYS[1]          hot:score
  KEYS[2+4(i-1)..] counter:views:<id_i>, hll:uv:<id_i>, meta:article:<id_i>, suspicious:<id_i>
  ARGV[i]          id_i
  returns          how many were ranked
]]
local removed = 0
for i = 1, #ARGV do
  local k = 2 + 4 * (i - 1)
  removed = removed + redis.call('ZREM', KEYS[1], ARGV[i])
  redis.call('DEL', KEYS[k], KEYS[k + 1], KEYS[k + 2], KEYS[k + 3])
end
return removed
`,
);

/** hotRestore-(5+5N): adds checkpointed counters into a lost shard (idempotent per item). */
export const hotRestore = defineScript(
  'hotRestore',
  'variable',
  `--[[ hotRestore-(5+5N): add N checkpointed items to what the shard counted since its loss
  KEYS[1] hot:score   KEYS[2] totals:suspicious   KEYS[3] checkpoint:dirty   KEYS[4] restored (SET)
  KEYS[5] epoch
  KEYS[6+5(i-1)..]    counter:views:<id_i>, hll:uv:<id_i>, hll:uv:<id_i>:restore, meta:article:<id_i>,
                      suspicious:<id_i>
  ARGV[1] now, epoch ms   ARGV[2..5] alpha, beta, base, gamma
  ARGV[6+7(i-1)..]    id_i, publishedAt (s), pv, hll ('' when none), repeat, budget, flagged
  returns             how many items were added (an id already in 'restored' is skipped, so an
                      interrupted restore can run again without counting anything twice); -1 when
                      the shard is healthy (epoch present: another process finished the restore)
]]
if redis.call('EXISTS', KEYS[5]) == 1 then return -1 end
local nowSec = tonumber(ARGV[1]) / 1000
local alpha, beta, base, gamma = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local kinds = { 'repeat', 'budget', 'flagged' }
local added = 0
for i = 1, (#KEYS - 5) / 5 do
  local k = 6 + 5 * (i - 1)
  local a = 6 + 7 * (i - 1)
  local id = ARGV[a]
  if redis.call('SADD', KEYS[4], id) == 1 then
    local pub = tonumber(ARGV[a + 1])
    redis.call('HSET', KEYS[k + 3], 'publishedAt', pub)
    local pv = redis.call('INCRBY', KEYS[k], ARGV[a + 2])
    local hll = ARGV[a + 3]
    if hll ~= '' then
      if redis.call('EXISTS', KEYS[k + 1]) == 1 then
        redis.call('SET', KEYS[k + 2], hll)
        redis.call('PFMERGE', KEYS[k + 1], KEYS[k + 2])
        redis.call('DEL', KEYS[k + 2])
      else
        redis.call('SET', KEYS[k + 1], hll)
      end
    end
    for j = 1, 3 do
      local n = tonumber(ARGV[a + 3 + j])
      if n > 0 then
        redis.call('HINCRBY', KEYS[k + 4], kinds[j], n)
        redis.call('HINCRBY', KEYS[2], kinds[j], n)
      end
    end
    if pv > 0 then
      local uv = redis.call('PFCOUNT', KEYS[k + 1])
      local hours = 0
      if nowSec > pub then hours = (nowSec - pub) / 3600 end
      local denominator = math.pow(hours + base, gamma)
      local score = 0
      if denominator > 0 then score = (alpha * pv + beta * uv) / denominator end
      redis.call('ZADD', KEYS[1], score, id)
    end
    redis.call('SADD', KEYS[3], id)
    added = added + 1
  end
end
return added
`,
);

/** hotSeal-2: marks a shard healthy after a restore. */
export const hotSeal = defineScript(
  'hotSeal',
  2,
  `--[[ hotSeal-2: the shard holds all its state again
  KEYS[1]  epoch   KEYS[2]  restored
  ARGV[1]  a new epoch token
  returns  1
]]
redis.call('SET', KEYS[1], ARGV[1])
redis.call('DEL', KEYS[2])
return 1
`,
);
