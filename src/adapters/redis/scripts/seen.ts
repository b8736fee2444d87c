/**
 * Lua scripts of the Redis seen filter (note 1's rolling daily Bloom filters on stock Redis).
 *
 * Each filter is a plain bitmap string, written with `SETBIT` and read with `BITFIELD_RO … GET u1`
 * (Redis ≥ 6.2); the engine hashes members (MurmurHash3 pair, src/domain/bloom.ts) and sends, per
 * member, its two 32-bit hashes packed as 8 little-endian bytes in ONE argument. Lua decodes them
 * with `struct.unpack` and walks the k positions g_i = (h1 + i·h2) mod m (Kirsch & Mitzenmacher 2006)
 * incrementally: g_0 = h1 mod m, g_{i+1} = g_i + (h2 mod m), minus m when it reaches m — every value
 * stays below 2^33, exact in Lua's doubles, and equal to the engine's `positions()`.
 *
 * Cost model (Redis 7.0 on a 2-core VM, measured): a `redis.call` costs ~0.5–1 µs and each argument
 * ~0.1 µs; Redis 7.0 turns a Lua number into an argument with `%.17g` (~0.3 µs) where
 * `string.format('%d', n)` takes ~0.06 µs (offsets are integers < 2^33; Lua 5.1 formats `%d` as a C
 * long, 64-bit on every 64-bit platform); a bit read at a random offset of a 1.7 MB bitmap costs
 * ~0.1 µs of cache misses. So the check batches bit reads into `BITFIELD_RO` calls, takes the first
 * offset of every member from the engine as a ready-made decimal string (the bulk of all reads), and
 * formats the few later offsets itself.
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
local fmt = string.format -- '%d' is ~5x cheaper than Redis 7.0 formatting a Lua number (%.17g)
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
for d = 1, #KEYS do
  local nopen = #open
  if nopen == 0 then break end
  local key = KEYS[d]
  if call('EXISTS', key) == 1 then
    -- round 1: g_0 of every open member
    local bits = probe(key, firstOps, nopen)
    local ops
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
      for j = 1, na do ops[3 * j - 2] = 'GET'; ops[3 * j - 1] = 'u1'; ops[3 * j] = fmt('%d', pos[j]) end
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
      -- drop the members just found from the open list and its round-1 ops
      local still, a = {}, 0
      firstOps = {}
      for j = 1, nopen do
        local c = open[j]
        if out[c] == '0' then
          still[#still + 1] = c
          firstOps[a + 1] = 'GET'; firstOps[a + 2] = 'u1'; firstOps[a + 3] = ARGV[3 + c]; a = a + 3
        end
      end
      open = still
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
local fmt = string.format
local added = 0
local at = 1
local h1, h2
for c = 1, n do
  h1, h2, at = unpack('<I4I4', packed, at)
  local g = h1 % m
  local step = h2 % m
  local new = false
  for i = 1, k do
    if call('SETBIT', key, fmt('%d', g), 1) == 0 then new = true end
    g = g + step
    if g >= m then g = g - m end
  end
  if new then added = added + 1 end
end
call('PEXPIRE', key, ARGV[3])
return added
`,
);
