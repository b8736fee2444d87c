--[[ readerSeenRestore-2: put a reader's filter rebuilt from its checkpoints, unless it has one now
  KEYS[1]   the reader's bitmap
  KEYS[2]   its state HASH (t, g, c as in readerSeen-3)
  ARGV[1]   the bitmap (every open sub-filter, zero-filled to the end of the newest); '' = none yet
            (a reader with nothing checkpointed: its first mark allocates it; a stray bitmap left
            without its state is deleted)
  ARGV[2]   t, virtual ms of the last activity
  ARGV[3]   geometry signature
  ARGV[4]   members per open sub-filter ('100000,1234')
  ARGV[5]   time to live, ms
  returns   1 put, 0 the reader has a state already (another process restored it first): kept
  Only a reader with no state is restored. A mark never creates a state without a restore first
  (readerSeen-3 answers '?' to a guarded call on a reader with no state), so a state found here
  came from a restore of the same checkpoints (or one later): keeping it loses nothing.
]]
local call = redis.call
if call('EXISTS', KEYS[2]) == 1 then return 0 end
if #ARGV[1] > 0 then call('SET', KEYS[1], ARGV[1], 'PX', ARGV[5]) else call('DEL', KEYS[1]) end
call('HSET', KEYS[2], 't', ARGV[2], 'g', ARGV[3], 'c', ARGV[4])
call('PEXPIRE', KEYS[2], ARGV[5])
return 1
