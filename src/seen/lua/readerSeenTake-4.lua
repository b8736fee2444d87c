--[[ readerSeenTake-4: take a reader's journal for a checkpoint, under a lease, with its last activity
  KEYS[1]   the reader's journal (packed pairs of the members added, in order)
  KEYS[2]   its 'taken' key
  KEYS[3]   its lease
  KEYS[4]   the reader's state HASH (field t: virtual ms of the last activity)
  ARGV[1]   the checkpoint's token
  ARGV[2]   lease, ms
  returns   { status, content, pttl, t }: status, content and pttl as in includes/take.lua ('str');
            pttl is the state's time to live (ms, -1 none, -2 gone), t the last activity ('' if gone)
]]
--- @include "includes/take"
local status, content = take(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), 'str')
if status ~= 1 then return { status, '', -1, '' } end
return { status, content, redis.call('PTTL', KEYS[4]), redis.call('HGET', KEYS[4], 't') or '' }
