--[[ seenAck-2: acknowledge a taken reader journal or dirty-reader set (its rows are committed)
  KEYS[1]   the 'taken' key
  KEYS[2]   its lease
  ARGV[1]   the checkpoint's token
  returns   1 deleted (it was this checkpoint's), 0 not (the lease is another's or gone)
]]
--- @include "includes/ack"
return ack(KEYS[1], KEYS[2], ARGV[1])
