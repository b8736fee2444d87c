--[[ hotRestore-5+5N: add N checkpointed items to what the shard counted since its loss
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
--- @include "includes/hot-score"

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
      redis.call('ZADD', KEYS[1], hotScore(nowSec, pub, pv, uv, alpha, beta, base, gamma), id)
    end
    redis.call('SADD', KEYS[3], id)
    added = added + 1
  end
end
return added
