--[[ seenAckDay-4: acknowledge a taken day journal and drop the day from the shard's journal index
  KEYS[1]   the day journal's 'taken' key
  KEYS[2]   its lease
  KEYS[3]   the day's journal
  KEYS[4]   the shard's journal index (SET of days)
  ARGV[1]   the checkpoint's token
  ARGV[2]   the day ('YYYYMMDD')
  returns   1 deleted (it was this checkpoint's), 0 not
  The day leaves the index only when it has neither a journal nor a taken one: a mark that journals
  after this script adds it back (seenMark-4), so no journal is ever outside the index.
]]
--- @include "includes/ack"
local done = ack(KEYS[1], KEYS[2], ARGV[1])
if redis.call('EXISTS', KEYS[3]) == 0 and redis.call('EXISTS', KEYS[1]) == 0 then redis.call('SREM', KEYS[4], ARGV[2]) end
return done
