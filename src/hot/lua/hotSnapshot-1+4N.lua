--[[ hotSnapshot-1+4N: counters of N items of one shard, HLLs as raw strings
  KEYS[1]          epoch (present while the shard holds all its state)
  KEYS[2+4(i-1)..] counter:views:<id_i>, hll:uv:<id_i>, meta:article:<id_i>, suspicious:<id_i>
  returns          { 0 } when the epoch is missing (a lost shard: its counters are partial);
                   else { 1, then 7 values per item: publishedAt (-1 when unregistered), pv, uv,
                   hll ('' when none), repeat, budget, flagged }
]]
--- @include "includes/append-counters"

if redis.call('EXISTS', KEYS[1]) == 0 then return { 0 } end
local out = { 1 }
for i = 1, (#KEYS - 1) / 4 do
  local k = 2 + 4 * (i - 1)
  appendCounters(out, k, function() return redis.call('GET', KEYS[k + 1]) or '' end)
end
return out
