/**
 * Lua scripts of the Redis seen filter (note 1's rolling daily Bloom filters on stock Redis).
 *
 * Each filter is a plain bitmap string read with `GETBIT` and written with `SETBIT`; the engine
 * hashes members (MurmurHash3 pair, src/domain/bloom.ts) and sends, per member, its two 32-bit
 * hashes packed as 8 little-endian bytes in ONE argument. Lua decodes them with `struct.unpack` and
 * walks the k positions g_i = (h1 + i·h2) mod m (Kirsch & Mitzenmacher 2006) incrementally:
 * g_0 = h1 mod m, g_{i+1} = g_i + (h2 mod m), minus m when it reaches m — every value stays below
 * 2^33, exact in Lua's doubles, and equal to the engine's `positions()`.
 */
import { defineScript } from '../client.js';

/**
 * seenCheck-D (D = the window's day count, passed per call).
 * Answers, for N members, whether any of the D day filters holds all k bits of the member.
 */
export const seenCheck = defineScript(
  'seenCheck',
  'variable',
  `--[[ seenCheck-D: is each member in any of the D daily Bloom bitmaps?
  KEYS[1..D]    the day bitmaps of one seen-filter shard (today first), one hash tag
  ARGV[1]       m, bits per bitmap
  ARGV[2]       k, hashes per member
  ARGV[3]       N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  ARGV[3+j]     g_0 = h1 mod m of member j, in decimal (j = 1..N)
  returns       a string of N chars, '1' = probably seen, '0' = not in any existing day bitmap
  How: a missing day key is skipped after one EXISTS. On each day the members still unanswered are
  probed in rounds, one BITFIELD_RO of many 'GET u1 <offset>' per round (a redis.call costs far more
  than a bit): round 1 reads g_0 of every member (offsets sent ready-made, so Lua formats no number
  for the bulk of the probes), round i reads g_(i-1) of the members whose bits were all 1 so far. An
  unseen member leaves at its first 0 bit (~1-2 probes a day); a member whose k bits are set on a day
  is seen and skips the remaining days.
]]
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local packed = ARGV[3]
local n = #packed / 8
local call = redis.call
local tunpack = unpack
local sunpack = struct.unpack
local CHUNK = 2000 -- ops per BITFIELD_RO: 3 values each must fit Lua's C stack (< 8000)

-- bits at the offsets in ops = { 'GET', 'u1', offset, 'GET', 'u1', offset, ... } (nops triples)
local function probe(key, ops, nops)
  if nops <= CHUNK then return call('BITFIELD_RO', key, tunpack(ops, 1, 3 * nops)) end
  local bits = {}
  for s = 1, nops, CHUNK do
    local e = s + CHUNK - 1
    if e > nops then e = nops end
    local part = call('BITFIELD_RO', key, tunpack(ops, 3 * s - 2, 3 * e))
    for j = 1, #part do bits[s + j - 1] = part[j] end
  end
  return bits
end

local out, open, firstOps = {}, {}, {}
for j = 1, n do
  out[j] = '0'
  open[j] = j
  firstOps[3 * j - 2] = 'GET'; firstOps[3 * j - 1] = 'u1'; firstOps[3 * j] = ARGV[3 + j]
end
local allOpen = true
for d = 1, #KEYS do
  local nopen = #open
  if nopen == 0 then break end
  local key = KEYS[d]
  if call('EXISTS', key) == 1 then
    -- round 1: g_0 of every open member
    local ops = firstOps
    if not allOpen then
      ops = {}
      for j = 1, nopen do ops[3 * j - 2] = 'GET'; ops[3 * j - 1] = 'u1'; ops[3 * j] = ARGV[3 + open[j]] end
    end
    local bits = probe(key, ops, nopen)
    local alive, pos, steps = {}, {}, {}
    for j = 1, nopen do
      if bits[j] == 1 then
        local c = open[j]
        local h1, h2 = sunpack('<I4I4', packed, 8 * c - 7)
        local step = h2 % m
        local g = h1 % m + step
        if g >= m then g = g - m end
        alive[#alive + 1] = c; pos[#pos + 1] = g; steps[#steps + 1] = step
      end
    end
    -- rounds 2..k: the next position of the members still all-ones
    for i = 2, k do
      local na = #alive
      if na == 0 then break end
      ops = {}
      for j = 1, na do ops[3 * j - 2] = 'GET'; ops[3 * j - 1] = 'u1'; ops[3 * j] = pos[j] end
      bits = probe(key, ops, na)
      local nalive, npos, nsteps = {}, {}, {}
      for j = 1, na do
        if bits[j] == 1 then
          local g = pos[j] + steps[j]
          if g >= m then g = g - m end
          nalive[#nalive + 1] = alive[j]; npos[#npos + 1] = g; nsteps[#nsteps + 1] = steps[j]
        end
      end
      alive, pos, steps = nalive, npos, nsteps
    end
    if #alive > 0 then
      for j = 1, #alive do out[alive[j]] = '1' end
      local still = {}
      for j = 1, nopen do
        if out[open[j]] == '0' then still[#still + 1] = open[j] end
      end
      open = still
      allOpen = false
    end
  end
end
return table.concat(out)
`,
);

/**
 * seenMark-1: adds N members to today's bitmap and sets its lifetime.
 */
export const seenMark = defineScript(
  'seenMark',
  1,
  `--[[ seenMark-1: add members to one day's Bloom bitmap, then set its time to live
  KEYS[1]     today's bitmap of one seen-filter shard
  ARGV[1]     m, bits per bitmap
  ARGV[2]     k, hashes per member
  ARGV[3]     time to live in ms (the engine computes it from its own clock: the end of the window)
  ARGV[4]     N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  returns     how many members set at least one new bit (were certainly not in the bitmap before)
]]
local key = KEYS[1]
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local packed = ARGV[4]
local n = #packed / 8
local call = redis.call
local unpack = struct.unpack
local added = 0
local at = 1
local h1, h2
for c = 1, n do
  h1, h2, at = unpack('<I4I4', packed, at)
  local g = h1 % m
  local step = h2 % m
  local new = false
  for i = 1, k do
    if call('SETBIT', key, g, 1) == 0 then new = true end
    g = g + step
    if g >= m then g = g - m end
  end
  if new then added = added + 1 end
end
call('PEXPIRE', key, ARGV[3])
return added
`,
);
