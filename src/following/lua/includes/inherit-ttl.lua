--[[ inherit-ttl: an inbox's tids never outlive its state HASH.
  inheritTtl(zkey, hkey, extraMs) gives zkey, when it exists without a time to live, the remaining
  time to live of hkey plus extraMs. A push or merge into an inbox whose rebuild found it empty
  creates the key with a plain SET; without this it would stay after its state expired.
  Nothing happens when zkey already expires or hkey has no time to live (no script leaves one so).
]]
local function inheritTtl(zkey, hkey, extra)
  if redis.call('PTTL', zkey) ~= -1 then return end
  local t = redis.call('PTTL', hkey)
  if t > 0 then redis.call('PEXPIRE', zkey, t + extra) end
end
