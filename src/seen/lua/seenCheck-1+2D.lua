--[[ seenCheck-1+2D: is each member in the Bloom bitmaps of some days of one shard; are the engine's
  copies of the other days current?
  KEYS[1]         the shard's epoch (read only when ARGV[5+D] is '1')
  KEYS[2..D+1]    D day bitmaps of one seen-filter shard and layout (any order), one hash tag
  KEYS[D+2..2D+1] their version keys
  ARGV[1]         m, bits per bitmap
  ARGV[2]         k, hashes per member
  ARGV[3]         N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  ARGV[3+d]       d = 1..D: what to do with day KEYS[1+d]:
                    'T'     Test the day here (today's: written all the time, never copied)
                    'S<v>'  the engine holds a copy at version v ('S' alone: none); if v is not
                            current, Send the bitmap
                    'L<v>'  copy at version v ('L' alone: none); if v is not current, test the day here
  ARGV[4+D]       g_0 = h1 mod m of each member in decimal, each followed by one space ('5 17 3 ')
  ARGV[5+D]       '1': guarded -- the shard's checkpoints are restored into Redis; '0': not guarded
  returns         { '?' } when guarded and the epoch is missing (Redis lost the shard: nothing was
                  read; the engine restores the shard and asks again); otherwise
                  { answers, s_1, b_1, ..., s_D, b_D }:
    answers       N chars, '1' = all k bits set in some day tested here, '0' = not (the engine ORs
                  its own tests of the copies)
    s_d, b_d      day KEYS[1+d]: '=', ''   the engine's copy is current (the engine tests it)
                               '', ''    no such key (expired, or never written): drop any copy
                               '!', ''   tested here (its answers are in 'answers')
                               v, bits   the bitmap changed or was asked for: version v and its bytes
  How: a missing day key is skipped after one EXISTS. On each day tested here the members still
  unanswered are probed in rounds, one BITFIELD_RO of many 'GET u1 <offset>' per round (a redis.call
  costs far more than a bit): round 1 reads g_0 of every member (offsets sent ready-made, so Lua
  formats no number for the bulk of the probes), round i reads g_(i-1) of the members whose bits were
  all 1 so far, and once (survivors x positions left) <= 128 one last round reads all their remaining
  positions (a member seen today would otherwise take k - 1 calls). An unseen member leaves at its
  first 0 bit (~1-2 probes a day); a member whose k bits are set on a day is seen and skips the
  remaining days.
  Layout (the for-you design's rolling daily Bloom filters on stock Redis): each filter is a plain bitmap
  string, written with SETBIT (seenMark-4) and read with BITFIELD_RO ... GET u1 (Redis >= 6.2); the
  engine hashes members (MurmurHash3 pair, src/seen/bloom.ts) and sends, per member, its two
  32-bit hashes packed as 8 little-endian bytes in ONE argument. Lua decodes them with struct.unpack
  and walks the k positions g_i = (h1 + i*h2) mod m (Kirsch & Mitzenmacher 2006) incrementally:
  g_0 = h1 mod m, g_(i+1) = g_i + (h2 mod m), minus m when it reaches m -- every value stays below
  2^33, exact in Lua's doubles, and equal to the engine's positions().
  Cost model (Redis 7.0 on a 2-core VM, measured): a redis.call costs ~0.5-1 us and each argument
  ~0.1 us; Redis 7.0 turns a Lua number into an argument with %.17g (~0.3 us) where
  string.format('%d', n) takes ~0.06 us (offsets are integers < 2^33; Lua 5.1 formats %d as a C
  long, 64-bit on every 64-bit platform); a bit read at a random offset of a 1.7 MB bitmap costs
  ~0.1 us of cache misses. So the check batches bit reads into BITFIELD_RO calls, takes the first
  offset of every member from the engine as a ready-made decimal string (the bulk of all reads), and
  formats the few later offsets itself. Those first offsets travel as ONE space-separated argument:
  500 separate arguments cost ~0.2 ms more end to end (ioredis encoding them, Redis parsing them)
  than the ~70 us Lua spends splitting one string.
  Past days are (nearly) immutable -- only today's bitmap is written in steady state -- so the engine
  keeps a copy of each past day's bitmap, tagged with the day's VERSION (<day key>:v, an integer
  that seenMark-4 bumps whenever it sets a new bit; a bitmap without one has version '0'). This
  script tests today's bitmap ('T') here and, for each past day, only compares versions: the engine tests
  the days whose copy is current itself, and gets the whole bitmap (one GET, ~1.7 MB at 1,000,000
  impressions a shard) when its copy is missing or stale. A version is never reused for another bitmap of the
  same key: a key's first change sets it to a random integer the engine draws (2^48 values), so a
  day that expired and was recreated by a late write does not match a copy of the old one.
  Shipping a bitmap through Lua costs ~3.3 ms at 1.7 MB (copied into a Lua string and out again),
  against ~1.6 ms for a plain GET; it keeps the check at one round trip and happens once per day
  and process (plus after late writes).
]]
local D = (#KEYS - 1) / 2
if ARGV[5 + D] == '1' and redis.call('EXISTS', KEYS[1]) == 0 then return { '?' } end
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local packed = ARGV[3]
local n = #packed / 8
local call = redis.call
local tunpack = unpack
local sunpack = struct.unpack
local fmt = string.format -- '%d' is ~5x cheaper than Redis 7.0 formatting a Lua number (%.17g)
local CHUNK = 2000 -- ops per BITFIELD_RO: 3 values each must fit Lua's C stack (< 8000)
local ALL_AT_ONCE = 128 -- once survivors x positions left <= this, read them all in one call
local WHOLE_BYTES = 1024 -- read a day whole when it has <= this many bytes per open member

-- round-1 ops of the open members: g_0 comes ready-made, all N in ONE space-separated argument (500
-- separate arguments would cost the client and Redis more than splitting one string here); built
-- when the first day tested by rounds exists, for the members still open then
local firstOps
local function buildFirstOps(open)
  local g0 = {}
  local s, find, sub = ARGV[4 + D], string.find, string.sub
  local at = 1
  for j = 1, n do
    local e = find(s, ' ', at, true)
    g0[j] = sub(s, at, e - 1)
    at = e + 1
  end
  firstOps = {}
  local a = 0
  for q = 1, #open do
    firstOps[a + 1] = 'GET'; firstOps[a + 2] = 'u1'; firstOps[a + 3] = g0[open[q]]
    a = a + 3
  end
end

-- every day: test here, or compare versions and ship or keep for testing here
local reply = { '' }
local here = {}
for d = 1, D do
  local key = KEYS[1 + d]
  local want = ARGV[3 + d]
  local s, b = '', ''
  if call('EXISTS', key) == 1 then
    local mode = string.sub(want, 1, 1)
    local v = mode ~= 'T' and (call('GET', KEYS[1 + D + d]) or '0') or ''
    local held = string.sub(want, 2)
    if mode ~= 'T' and held ~= '' and held == v then
      s = '='
    elseif mode == 'S' then
      s = v
      b = call('GET', key)
    else
      s = '!'
      here[#here + 1] = key
    end
  end
  reply[2 * d] = s
  reply[2 * d + 1] = b
end

-- the open members (indices) whose k bits are all set in the bitmap at `key`, read whole into Lua
-- (one GET, then string.byte: a day read whole has at most nopen x WHOLE_BYTES bytes, far below
-- 2^28, so bit ops on positions are exact)
local band, rshift, byte = bit.band, bit.rshift, string.byte
local MASK = { [0] = 128, 64, 32, 16, 8, 4, 2, 1 }
local function testWhole(key, members)
  local s = call('GET', key)
  local found = {}
  for q = 1, #members do
    local c = members[q]
    local h1, h2 = sunpack('<I4I4', packed, 8 * c - 7)
    local g, step = h1 % m, h2 % m
    local x = 0
    while true do
      local b = byte(s, rshift(g, 3) + 1)
      if not b or band(b, MASK[band(g, 7)]) == 0 then break end
      x = x + 1
      if x == k then
        found[#found + 1] = c
        break
      end
      g = g + step
      if g >= m then g = g - m end
    end
  end
  return found
end

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

local out, open = {}, {}
for j = 1, n do
  out[j] = '0'
  open[j] = j
end
for d = 1, #here do
  local nopen = #open
  if nopen == 0 then break end
  local key = here[d]
  local alive
  if call('STRLEN', key) <= nopen * WHOLE_BYTES then
    alive = testWhole(key, open)
  else
    if not firstOps then buildFirstOps(open) end
    -- round 1: g_0 of every open member
    local bits = probe(key, firstOps, nopen)
    local ops
    local pos, steps
    alive, pos, steps = {}, {}, {}
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
    -- rounds 2..k: the next position of the members still all-ones; once few are left, all their
    -- remaining positions in one last call (members seen on this day would take k - 1 calls)
    for i = 2, k do
      local na = #alive
      if na == 0 then break end
      local left = k - i + 1 -- positions g_(i-1) .. g_(k-1) not read yet
      if na * left <= ALL_AT_ONCE then
        ops = {}
        local a = 0
        for j = 1, na do
          local g, step = pos[j], steps[j]
          for _ = 1, left do
            ops[a + 1] = 'GET'; ops[a + 2] = 'u1'; ops[a + 3] = fmt('%d', g); a = a + 3
            g = g + step
            if g >= m then g = g - m end
          end
        end
        bits = probe(key, ops, na * left)
        local nalive = {}
        for j = 1, na do
          local all = true
          for r = (j - 1) * left + 1, j * left do
            if bits[r] ~= 1 then all = false; break end
          end
          if all then nalive[#nalive + 1] = alive[j] end
        end
        alive = nalive
        break
      end
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
  end
  for j = 1, #alive do out[alive[j]] = '1' end
  if #alive > 0 and d < #here then
    -- drop the members just found from the open list (and its round-1 ops, once built)
    local still, ops1, a = {}, {}, 0
    for j = 1, nopen do
      local c = open[j]
      if out[c] == '0' then
        still[#still + 1] = c
        if firstOps then
          ops1[a + 1] = 'GET'; ops1[a + 2] = 'u1'; ops1[a + 3] = firstOps[3 * j]; a = a + 3
        end
      end
    end
    open = still
    if firstOps then firstOps = ops1 end
  end
end
reply[1] = table.concat(out)
return reply
