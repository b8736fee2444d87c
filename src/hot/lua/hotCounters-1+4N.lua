--[[ hotCounters-1+4N: counters of N items of one shard
  KEYS[1]          hot:score (ZSET)
  KEYS[2+4(i-1)..] counter:views:<id_i>, hll:uv:<id_i>, meta:article:<id_i>, suspicious:<id_i>
  ARGV[i]          id_i
  returns          7 values per item: publishedAt (seconds, -1 when unregistered), pv, uv,
                   score ('' when unranked), repeat, budget, flagged
]]
--- @include "includes/append-counters"

local out = {}
for i = 1, #ARGV do
  appendCounters(out, 2 + 4 * (i - 1), function() return redis.call('ZSCORE', KEYS[1], ARGV[i]) or '' end)
end
return out
