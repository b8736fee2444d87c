--[[ hotRescore-1+3N: rescoring pass over N ranked items of one shard
  KEYS[1]          hot:score (ZSET)
  KEYS[2+3(i-1)]   counter:views:<id_i>    KEYS[3+3(i-1)] hll:uv:<id_i>    KEYS[4+3(i-1)] meta:article:<id_i>
  ARGV[1] now, epoch ms   ARGV[2..5] alpha, beta, base, gamma   ARGV[5+i] id_i
  returns { rescored, dropped } — an item without publishedAt or without a counted view is removed
          (ZREM); the others get ZADD XX with the hot-ranking design's score at now (an item trimmed meanwhile stays out)
]]
--- @include "includes/hot-score"

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
    redis.call('ZADD', zset, 'XX', hotScore(nowSec, pub, pv, uv, alpha, beta, base, gamma), id)
    rescored = rescored + 1
  end
end
return { rescored, dropped }
