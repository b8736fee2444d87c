--[[ ack: a checkpoint acknowledges what it took, once its rows are committed in PostgreSQL
  ack(taken, lease, token) -> 1 when 'taken' was this checkpoint's and is now deleted, else 0
  A checkpoint whose lease expired (another one took over, or none yet) deletes nothing: the taken
  journal stays for the next take, which writes it again (idempotent merges).
]]
local function ack(taken, lease, token)
  local call = redis.call
  if call('GET', lease) ~= token then return 0 end
  call('DEL', taken, lease)
  return 1
end
