--[[ readerSeenRestore-2+N: put a reader's filter rebuilt from its checkpoints, unless it has one now
  KEYS[1]   sub-filter 0
  KEYS[2]   the state HASH (t, g, c as in readerSeen-3+N)
  KEYS[2+i] i = 1..N: sub-filter i (N = its sub-filters - 1)
  ARGV[1]   t, virtual ms of the last activity
  ARGV[2]   geometry signature
  ARGV[3]   members per open sub-filter ('100,200,37')
  ARGV[4]   time to live, ms
  ARGV[5..] the bytes of each open sub-filter, level 0 first; none = nothing checkpointed: the first mark allocates sub-filter 0
            (a stray bitmap left without its state is deleted)
  returns   1 put, 0 the reader has a state already (another process restored it first): kept
  Only a reader with no state is restored. A mark never creates a state without a restore first
  (readerSeen-3+N answers '?' to a guarded call on a reader with no state), so a state found here
  came from a restore of the same checkpoints (or one later): keeping it loses nothing.
]]
local call = redis.call
if call('EXISTS', KEYS[2]) == 1 then return 0 end
call('DEL', KEYS[1])
for i = 3, #KEYS do call('DEL', KEYS[i]) end
for a = 5, #ARGV do
  local key = a == 5 and KEYS[1] or KEYS[a - 3]
  call('SET', key, ARGV[a], 'PX', ARGV[4])
end
call('HSET', KEYS[2], 't', ARGV[1], 'g', ARGV[2], 'c', ARGV[3])
call('PEXPIRE', KEYS[2], ARGV[4])
return 1
