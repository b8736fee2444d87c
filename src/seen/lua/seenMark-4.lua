--[[ seenMark-4: add members to one day's Bloom bitmap, bump its version, set the time to live, and
  journal the members that set a new bit (what the PostgreSQL checkpoint writes)
  KEYS[1]     the day's bitmap of one seen-filter shard (today's, or an earlier day's on a late write)
  KEYS[2]     its version key
  KEYS[3]     the day's journal: a string of packed hash pairs, 8 bytes per member (only when ARGV[6] ~= '')
  KEYS[4]     the shard's journal index: a SET of the days that have a journal (only when ARGV[6] ~= '')
  (every key under the shard's hash tag: Keys.seenDays)
  ARGV[1]     m, bits per bitmap
  ARGV[2]     k, hashes per member
  ARGV[3]     time to live in ms (the engine computes it from its own clock: the end of the window)
  ARGV[4]     N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  ARGV[5]     a random integer in [1, 2^48): the version a bitmap starts at when it has none
  ARGV[6]     the day ('YYYYMMDD') when checkpoints are on: journal the new members; '' = no journal
  returns     how many members set at least one new bit (were certainly not in the bitmap before)
  The version changes iff a bit changed (re-marking seen members keeps copies of the day current);
  a key's first version is random, not 1, so a bitmap recreated after expiry never matches a copy
  of the old one by accident.
  Journal: only members that set a new bit are appended. Every bit of the bitmap was first set by
  such a member, so replaying the checkpointed journals rebuilds the bitmap exactly. The journal gets
  the day's time to live; the index is extended (never shortened) to it, so a late write to an old
  day cannot make it expire before today's journal is taken.
  A missing bitmap is created at its full size, ceil(m/8) zero bytes, by one SETRANGE of its last
  byte: Redis allocates the string zeroed at exactly that length, with no Lua string built (a
  `string.rep` of the bitmap built it in Lua first: 17.6 s for a 384 MiB day). Grown bit by bit at
  random offsets, Redis's greedy string growth (double below 1 MB, +1 MB above) would leave it much
  larger than its bits (measured, Redis 7.0 MEMORY USAGE of a 1.7 MB filter: 3.1 MB grown by SETBIT,
  1.8 MB created full size). A shard's bitmap is at most 1 MiB (src/seen/layout.ts), which Redis
  creates in well under a millisecond.
  Bits are set with BITFIELD ... SET u1 <offset> 1, which answers each bit's old value: one
  redis.call per 1,000 bits instead of one SETBIT each (a redis.call costs ~0.5-1 us; measured, Redis
  7.0 on a 2-core VM, 20 members x 7 bits: 140-159 us a call against 197-211 us with SETBIT, same bits
  and journal).
  Bit layout and hashing: see seenCheck-1+2D.lua.
]]
local key = KEYS[1]
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local packed = ARGV[4]
local day = ARGV[6]
local n = #packed / 8
local call = redis.call
-- BITFIELD operations per call: 4 arguments each, under Lua's 8,000-value unpack limit
local CHUNK = 1000
if call('EXISTS', key) == 0 then call('SETRANGE', key, math.ceil(m / 8) - 1, '\0') end
local sunpack = struct.unpack
local fmt = string.format
local sub = string.sub
local journal = day ~= ''
-- every bit of the batch: BITFIELD ... SET u1 <offset> 1 answers each bit's old value
local old = {}
local ops = {}
local nops = 0
local function flush()
  local got = call('BITFIELD', key, unpack(ops, 1, nops * 4))
  for i = 1, nops do old[#old + 1] = got[i] end
  nops = 0
end
local at = 1
local h1, h2
for c = 1, n do
  h1, h2, at = sunpack('<I4I4', packed, at)
  local g = h1 % m
  local step = h2 % m
  for i = 1, k do
    local j = nops * 4
    ops[j + 1] = 'SET'; ops[j + 2] = 'u1'; ops[j + 3] = fmt('%d', g); ops[j + 4] = 1
    nops = nops + 1
    if nops == CHUNK then flush() end
    g = g + step
    if g >= m then g = g - m end
  end
end
if nops > 0 then flush() end
local fresh = {}
local added = 0
for c = 1, n do
  local base = (c - 1) * k
  for i = 1, k do
    if old[base + i] == 0 then
      added = added + 1
      if journal then fresh[added] = sub(packed, (c - 1) * 8 + 1, c * 8) end
      break
    end
  end
end
if added > 0 and call('INCR', KEYS[2]) == 1 then call('SET', KEYS[2], ARGV[5]) end
call('PEXPIRE', key, ttl)
call('PEXPIRE', KEYS[2], ttl)
if journal and added > 0 then
  call('APPEND', KEYS[3], table.concat(fresh))
  call('PEXPIRE', KEYS[3], ttl)
  call('SADD', KEYS[4], day)
  if call('PTTL', KEYS[4]) < ttl then call('PEXPIRE', KEYS[4], ttl) end
end
return added
