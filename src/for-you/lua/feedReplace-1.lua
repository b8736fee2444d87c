--[[ feedReplace-1: DEL the list, RPUSH the new ids in chunks, PEXPIRE it
  KEYS[1]     the reader's page cache (a LIST of item ids)
  ARGV[1]     time to live in ms
  ARGV[2..]   the new ids, head first (none: the cache is just dropped)
  returns     the new length
]]
local key = KEYS[1]
redis.call('DEL', key)
local n = #ARGV
if n < 2 then return 0 end
local chunk = 1000
for i = 2, n, chunk do
  local j = i + chunk - 1
  if j > n then j = n end
  redis.call('RPUSH', key, unpack(ARGV, i, j))
end
redis.call('PEXPIRE', key, ARGV[1])
return n - 1
