--[[ hotView-9: record one view of an item by a visitor (the hot-ranking design + rate limit + isolation)
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
  ARGV[10] '1' when the caller flagged the view      ARGV[11] retention, ms (0 = keep forever)
  returns  { verdict, pv, uv, score } — verdict 1 counted, 2 repeat, 3 budget, 4 flagged,
           5 expired (past retention), -1 unknown item (nothing written, zeros); pv and uv after
           the view; score as a %.17g string ('0' when the item is not ranked)
  Freshet's additions to the hot-ranking design's script ("原子更新脚本"), folded into the same atomic step: the item
  must be registered (no publishedAt -> nothing written, instead of the note's pub = 0), items past
  the retention (unless it is 0) are refused, the rate limit (SET NX PX) and the per-minute budget run first,
  suspicious views go to their own counters, the score is returned as a string (%.17g: a Lua number
  in a reply would be truncated to an integer), and the item is marked dirty for the next
  checkpoint. Time is always an argument, never Redis TIME (virtual time works).
]]
--- @include "includes/hot-score"

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

local retention = tonumber(ARGV[11])
if retention > 0 and now - pub * 1000 > retention then return current(5) end
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

-- the hot-ranking design: PV, UV, hours since publication, score, ranking
local pv = redis.call('INCRBY', KEYS[1], 1)
redis.call('PFADD', KEYS[2], ARGV[2])
local uv = redis.call('PFCOUNT', KEYS[2])
local score = hotScore(now / 1000, pub, pv, uv, tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[7]))
redis.call('ZADD', KEYS[3], score, id)
redis.call('SADD', KEYS[9], id)
return { 1, pv, uv, string.format('%.17g', score) }
