--[[ readerSeenTake-4: take a reader's journal for a checkpoint, under a lease, with its last activity
  KEYS[1]   the reader's journal (packed pairs of the members added, in order)
  KEYS[2]   its 'taken' key
  KEYS[3]   its lease
  KEYS[4]   the reader's state HASH (t: virtual ms of the last activity, g: its geometry signature)
  ARGV[1]   the checkpoint's token
  ARGV[2]   lease, ms
  returns   { status, content, pttl, t, g }: status, content and pttl as in includes/take.lua ('str');
            pttl is the state's time to live (ms, -1 none, -2 gone), t the last activity and g the
            signature ('' if gone): the journal is checkpointed under the filter's own geometry
]]
--- @include "includes/take"
local status, content = take(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), 'str')
if status ~= 1 then return { status, '', -1, '', '' } end
local state = redis.call('HMGET', KEYS[4], 't', 'g')
return { status, content, redis.call('PTTL', KEYS[4]), state[1] or '', state[2] or '' }
