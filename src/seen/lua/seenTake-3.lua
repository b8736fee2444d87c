--[[ seenTake-3: take a day journal or a dirty-reader set for a checkpoint, under a lease
  KEYS[1]   the journal: a day's journal (STRING of packed pairs) or a shard's dirty-reader SET
  KEYS[2]   its 'taken' key
  KEYS[3]   its lease
  ARGV[1]   the checkpoint's token (random, one per checkpoint run)
  ARGV[2]   lease, ms
  ARGV[3]   'str' (a journal of pairs) or 'set' (a SET of reader ids)
  returns   { status, content, pttl }: see includes/take.lua
]]
--- @include "includes/take"
local status, content, pttl = take(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), ARGV[3])
return { status, content, pttl }
