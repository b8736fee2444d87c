--[[ hotForget-1+4N: ZREM from hot:score and DEL the counters, meta and suspicious counts
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
