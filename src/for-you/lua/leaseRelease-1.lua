--[[ leaseRelease-1: delete the lease only if it still holds the caller's token
  KEYS[1]     the reader's refresh lease (a string holding the holder's token)
  ARGV[1]     the caller's token
  returns     1 when released, 0 when the lease was gone or held by another token
]]
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
