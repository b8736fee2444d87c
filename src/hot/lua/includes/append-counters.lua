--[[ append-counters: the counter reads hotCounters-1+4N and hotSnapshot-1+4N share.
  appendCounters(out, k, fourth) appends one item's 7 values to `out`:
    publishedAt (epoch s, -1 when unregistered), pv, uv (PFCOUNT), fourth() (called after PFCOUNT),
    repeat, budget, flagged (suspicious views by kind)
  from KEYS[k .. k+3] = counter:views:<id>, hll:uv:<id>, meta:article:<id>, suspicious:<id>.
]]
local function appendCounters(out, k, fourth)
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
end
