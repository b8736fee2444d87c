--[[ seenLayout-N: the layouts of some days of the rolling seen filters, each recorded by the first
  process that touches the day and never changed (src/seen/day-layouts.ts)
  KEYS[d]   d = 1..N: a day's layout key (a string: 'n<shards>c<capacity>m<bits>k<hashes>'), one hash tag
  ARGV[2d-1] the layout this process would give day d (its settings', or the one the day's
            PostgreSQL checkpoints name after a Redis loss)
  ARGV[2d]  time to live in ms when it sets the key (the end of the day's window, from the engine's clock)
  returns   N layouts: per day the one recorded, or ARGV[2d-1] now recorded
  Every process then reads and writes a day under the returned layout, so a day never holds marks of
  two layouts, and a change of settings applies from the next day no process has touched.
]]
local out = {}
for d = 1, #KEYS do
  local held = redis.call('GET', KEYS[d])
  if not held then
    held = ARGV[2 * d - 1]
    redis.call('SET', KEYS[d], held, 'PX', ARGV[2 * d])
  end
  out[d] = held
end
return out
