--[[ edgeRate-1: one request against a caller's budget of the HTTP edge (a fixed window, @fastify/rate-limit's)
  KEYS[1]   the caller's request count in the current window (STRING)
  ARGV[1]   the window, ms
  returns   { requests in the window including this one, ms until the window ends }
]]
local n = redis.call('INCR', KEYS[1])
if n == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return { n, tonumber(ARGV[1]) }
end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  -- a count left without a time to live (never by this script): give it one, so it cannot pin a caller
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return { n, ttl }
