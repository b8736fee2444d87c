--[[ hotRegister-N: HSET meta:article:<id> publishedAt <seconds> (the hot-ranking design's preparation step)
  KEYS[i]    meta:article:<id_i>
  ARGV[1]    '1': only update items already registered; ARGV[1+i] publishedAt of id_i, epoch seconds
  returns    how many were written
]]
local written = 0
for i = 1, #KEYS do
  if ARGV[1] ~= '1' or redis.call('EXISTS', KEYS[i]) == 1 then
    redis.call('HSET', KEYS[i], 'publishedAt', ARGV[1 + i])
    written = written + 1
  end
end
return written
