--[[ tlRead-2: a range of tids with the state and floor
  KEYS[1]  the ZSET (inbox or outbox)
  KEYS[2]  its state HASH
  ARGV[1]  upper bound, ZRANGE BYSCORE syntax ('(123' or '+inf')
  ARGV[2]  lower bound ('(45')
  ARGV[3]  count
  returns  { state or '', floor or '' (no state: missing), tid1, tid2, ... } newest first
]]
local st = redis.call('HMGET', KEYS[2], 'state', 'floor')
local out = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'BYSCORE', 'REV', 'LIMIT', 0, ARGV[3])
table.insert(out, 1, st[2] or '')
table.insert(out, 1, st[1] or '')
return out
