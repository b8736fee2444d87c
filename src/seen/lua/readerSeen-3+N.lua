--[[ readerSeen-3+N: the per-reader scalable Bloom filter of the discover design (check, mark or describe one reader)
  KEYS[1]     sub-filter 0
  KEYS[2]     the state HASH: t = virtual ms of the last activity, g = geometry signature,
              c = members per open sub-filter, comma-separated ('100,200,37')
  KEYS[3]     the journal: the packed hash pairs of the members added, in order (only with flag 'j')
  KEYS[3+i]   i = 1..N: sub-filter i (N = its sub-filters - 1)
  ARGV[1]     mode: 'c' check (refreshes the TTL), 'm' mark (adds; refreshes), 'd' describe (read only)
  ARGV[2]     now, virtual epoch ms
  ARGV[3]     ttl ms: the filter is gone once now - t >= ttl; keys also get PEXPIRE ttl (real time)
  ARGV[4]     the signature this call runs under (src/seen/scalable-bloom.ts)
  ARGV[5]     its sub-filters, 'offset,bits,hashes,capacity;' repeated, level 0 first (the offset, in
              the concatenated bitmap of the engine's snapshots and checkpoints, is not used here)
  ARGV[6]     N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  ARGV[7]     flags: 'g' guarded -- a reader with no state at all may have a checkpoint in PostgreSQL:
              answer '?' (nothing read or written) so the engine restores it first; 'j' journal the
              members a mark adds; 'o' the
              signature is not the settings' (a filter started before them): never start a filter
              under it; 'r' a live filter of another signature is one the engine cannot read:
              treat it as gone (replace it)
  returns     '?' for 'c' or 'm' when guarded and the state HASH does not exist
              { '?g', sig } when the reader's live filter has another signature: run again under sig
                (sig '' with flag 'o': the filter is gone, run again under the settings')
              'c': N chars, '1' = probably seen, '0' = not seen -- or, when sub-filters 0..j-1 are
                   shipped for the engine to test, { N chars (of the others), bytes of 0, ..., of j-1 }
              'm': { the counts after the mark ('c' field), 1 if this mark started the journal else 0 }
              'd': { t or '', c or '', bytes of the open sub-filters }
  Life: a filter is live when its state exists and t > now - ttl; otherwise it answers '0' for all,
  and a check or mark under the settings' signature deletes what is left of it (a mark then starts
  it empty under that signature). A live filter keeps the signature it started with: it is read and
  marked under it, never dropped for a change of settings.
  t only grows. A live state may have no bitmap (a reader restored with nothing checkpointed):
  it answers '0' for all, and its first mark allocates sub-filter 0.
  Check: the smallest sub-filters (the oldest) are shipped to the engine, which tests them in JS
  (their bytes cost less to copy than the Lua loop over every member costs); the others are tested
  here, newest first, a sub-filter at a time, all still-open members together. A small sub-filter (at most
  WHOLE_BYTES = 1024 bytes per open member) is read whole into Lua (one GET) and tested with string.byte --
  ~0.1 us a bit, ~1.7 us per KB copied; a large one
  by BITFIELD_RO rounds as in seenCheck-1+2D (~0.45 us a bit) -- measured, Redis 7.0 on the 2-core
  test VM. An unseen member leaves a full sub-filter after ~2 bits.
  Mark: exactly the in-process adapter's sequence (src/seen/memory-reader-seen-filter.ts): each
  member in order is skipped when present in some sub-filter, else added to the newest, which opens
  the next when it holds its capacity. Done as: one batched check of every member (the state before
  the mark), then the members not present set their k bits in the newest sub-filter by BITFIELD SET,
  as many at a time as it has room for -- BITFIELD answers each bit's old value in order, so a member
  whose k bits were all set already (a duplicate, or a false positive of members added just before)
  is present and not counted, as the sequence would have it. After a sub-filter opens mid-mark, the
  next members are first tested against the ones this mark changed.
  Storage: each sub-filter is a string of its own, created at its size by one SETRANGE of its last
  byte when it opens (Redis allocates it zeroed at that length, with no Lua string built; at most
  2 MiB: no stall). The journal gets the
  members added, in the order they were added, so replaying the checkpointed journals
  (src/seen/seen-fold.ts) rebuilds the same bits and counts; it gets the reader's time to live.
  Hashing: the engine's MurmurHash3 pairs; positions g_0 = h1 mod m_i, g_(j+1) = g_j + (h2 mod m_i),
  minus m_i once it reaches m_i -- exact in Lua's doubles and equal to the in-process adapter's walk.
]]
local meta = KEYS[2]
local mode = ARGV[1]
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local sig = ARGV[4]
local flags = ARGV[7] or ''
local call = redis.call
local fmt = string.format
local sunpack = struct.unpack
local byte = string.byte
local band, rshift = bit.band, bit.rshift
local ceil = math.ceil
local WHOLE_BYTES = 1024 -- read a sub-filter whole when it has <= this many bytes per open member
local SHIP_BYTES = 64 -- a check ships a sub-filter of <= this many bytes per member to the engine
local SHIP_TOTAL = 131072 -- and at most this many bytes in all
local CHUNK = 2000 -- ops per BITFIELD(_RO): 3-4 values each must fit Lua's C stack (< 8000)
local ALL_AT_ONCE = 128

local levels = {}
for m, k, cap in string.gmatch(ARGV[5], '%d+,(%d+),(%d+),(%d+);') do
  levels[#levels + 1] = { m = tonumber(m), k = tonumber(k), cap = tonumber(cap) }
end
-- sub-filter i's key (1-based: level i - 1)
local function keyOf(i)
  if i > 1 then return KEYS[2 + i] end
  return KEYS[1]
end

if mode ~= 'd' and string.find(flags, 'g', 1, true) and call('EXISTS', meta) == 0 then return '?' end
local state = call('HMGET', meta, 't', 'g', 'c')
local t, g, c = tonumber(state[1]), state[2], state[3]
local alive = t ~= nil and c ~= false and g ~= false and (now - t) < ttl
if alive and g ~= sig then
  if not string.find(flags, 'r', 1, true) then return { '?g', g } end
  alive = false -- a signature the engine cannot read: the filter is replaced
end
if not alive and string.find(flags, 'o', 1, true) then return { '?g', '' } end
local live = alive

local function strlenAll(open)
  local total = 0
  for i = 1, open do total = total + call('STRLEN', keyOf(i)) end
  return total
end

if mode == 'd' then
  if not live then return { '', '', 0 } end
  local n = 0
  for _ in string.gmatch(c, '%d+') do n = n + 1 end
  return { state[1], c, strlenAll(n) }
end

-- sub-filter i allocated, its bytes zero: a new string of its exact size (SETRANGE of the last byte:
-- Redis allocates it zeroed, no Lua string built)
local function allocate(i)
  local key = keyOf(i)
  call('DEL', key)
  call('SETRANGE', key, ceil(levels[i].m / 8) - 1, '\0')
end

if not live then
  -- a filter gone (idle for the TTL): its journal goes with it, so no member of the dead filter is
  -- ever checkpointed under the new one; every sub-filter string too
  call('DEL', KEYS[1], meta, KEYS[3])
  for i = 4, #KEYS do call('DEL', KEYS[i]) end
  if mode == 'c' then return string.rep('0', #ARGV[6] / 8) end
  t, c = now, '0'
end

local counts = {}
for x in string.gmatch(c, '(%d+)') do counts[#counts + 1] = tonumber(x) end
-- a new filter, or a live state without its bitmap (restored empty: readerSeenRestore-2+N)
if mode == 'm' and call('EXISTS', KEYS[1]) == 0 then allocate(1) end

local packed = ARGV[6]
local n = #packed / 8
local H1, H2 = {}, {}
do
  local at = 1
  for j = 1, n do H1[j], H2[j], at = sunpack('<I4I4', packed, at) end
end

-- BITFIELD_RO of ops = { 'GET', 'u1', offset, ... } (nops triples), in chunks
local function readBits(key, ops, nops)
  if nops <= CHUNK then return call('BITFIELD_RO', key, unpack(ops, 1, 3 * nops)) end
  local bits = {}
  for s = 1, nops, CHUNK do
    local e = math.min(s + CHUNK - 1, nops)
    local part = call('BITFIELD_RO', key, unpack(ops, 3 * s - 2, 3 * e))
    for q = 1, #part do bits[s + q - 1] = part[q] end
  end
  return bits
end

-- members of `open` (indices) whose k bits are all set in sub-filter i, read whole into Lua (a
-- sub-filter read whole is at most 16 Mbit: bit ops on positions are exact)
local MASK = { [0] = 128, 64, 32, 16, 8, 4, 2, 1 }
local function testWhole(i, open, found)
  local lv = levels[i]
  local m, k = lv.m, lv.k
  local s = call('GET', keyOf(i))
  if not s then return end
  for q = 1, #open do
    local j = open[q]
    local p, step = H1[j] % m, H2[j] % m
    local x = 0
    while true do
      local b = byte(s, rshift(p, 3) + 1)
      if not b or band(b, MASK[band(p, 7)]) == 0 then break end
      x = x + 1
      if x == k then
        found[j] = true
        break
      end
      p = p + step
      if p >= m then p = p - m end
    end
  end
end

-- the same by BITFIELD_RO rounds: round r reads g_(r-1) of the members all-ones so far; once
-- (survivors x positions left) <= ALL_AT_ONCE, their remaining positions in one last call
local function testRounds(i, open, found)
  local lv = levels[i]
  local m, k, key = lv.m, lv.k, keyOf(i)
  local alive, pos, steps = {}, {}, {}
  for q, j in ipairs(open) do alive[q] = j; pos[q] = H1[j] % m; steps[q] = H2[j] % m end
  for r = 1, k do
    local na = #alive
    if na == 0 then return end
    local left = k - r + 1
    if r > 1 and na * left <= ALL_AT_ONCE then
      local ops, a = {}, 0
      for q = 1, na do
        local p, step = pos[q], steps[q]
        for _ = 1, left do
          ops[a + 1] = 'GET'; ops[a + 2] = 'u1'; ops[a + 3] = fmt('%d', p); a = a + 3
          p = p + step
          if p >= m then p = p - m end
        end
      end
      local bits = readBits(key, ops, na * left)
      for q = 1, na do
        local all = true
        for x = (q - 1) * left + 1, q * left do
          if bits[x] ~= 1 then all = false; break end
        end
        if all then found[alive[q]] = true end
      end
      return
    end
    local ops = {}
    for q = 1, na do ops[3 * q - 2] = 'GET'; ops[3 * q - 1] = 'u1'; ops[3 * q] = fmt('%d', pos[q]) end
    local bits = readBits(key, ops, na)
    local nalive, npos, nsteps = {}, {}, {}
    for q = 1, na do
      if bits[q] == 1 then
        local p = pos[q] + steps[q]
        if p >= m then p = p - m end
        nalive[#nalive + 1] = alive[q]; npos[#npos + 1] = p; nsteps[#nsteps + 1] = steps[q]
      end
    end
    alive, pos, steps = nalive, npos, nsteps
  end
  for q = 1, #alive do found[alive[q]] = true end
end

-- which of `members` (indices) are present in sub-filters last..first (newest first)
local function present(members, first, last)
  local found = {}
  local open = members
  for i = last, first, -1 do
    if #open == 0 then break end
    local hit = {}
    if ceil(levels[i].m / 8) <= #open * WHOLE_BYTES and levels[i].m <= 2 ^ 24 then
      testWhole(i, open, hit)
    else
      testRounds(i, open, hit)
    end
    local still = {}
    for _, j in ipairs(open) do
      if hit[j] then found[j] = true else still[#still + 1] = j end
    end
    open = still
  end
  return found
end

local all = {}
for j = 1, n do all[j] = j end
-- a check ships the smallest sub-filters (the oldest) to the engine, which tests them in JS: testing
-- a sub-filter here costs ~0.2 us per open member whatever its size, shipping it ~3.3 us per KB
-- (copied into Lua and out into the reply), so sub-filters of <= SHIP_BYTES per member go, up to
-- SHIP_TOTAL bytes in all; the others are tested here
local shipped = 0
if mode == 'c' and live and n > 0 then
  local total = 0
  for i = 1, #counts do
    local bytes = ceil(levels[i].m / 8)
    if bytes > n * SHIP_BYTES or total + bytes > SHIP_TOTAL then break end
    total = total + bytes
    shipped = i
  end
end
local before = (live and n > 0) and present(all, shipped + 1, #counts) or {}

local out, fresh = {}, {}
if mode == 'c' then
  for j = 1, n do out[j] = before[j] and '1' or '0' end
else
  -- the members not present before the mark, in order: added to the newest sub-filter, as many at
  -- a time as it has room for; BITFIELD SET answers each old bit, in order
  local adds = {}
  for j = 1, n do if not before[j] then adds[#adds + 1] = j end end
  local changed = #counts -- sub-filters from here on were written by this mark
  local at = 1
  while at <= #adds do
    local top = #counts
    local lv = levels[top]
    local take = #adds - at + 1
    local room = lv.cap - counts[top]
    if top < #levels and room < take then take = math.max(room, 1) end
    local chunk = {}
    for q = 0, take - 1 do chunk[#chunk + 1] = adds[at + q] end
    at = at + take
    if top > changed then
      -- a sub-filter opened during this mark: the members after it may be present in the ones it filled
      local hit = present(chunk, changed, top - 1)
      local still = {}
      for _, j in ipairs(chunk) do if not hit[j] then still[#still + 1] = j end end
      chunk = still
    end
    local m, k, key = lv.m, lv.k, keyOf(top)
    local ops, nops, old = {}, 0, {}
    local function flush()
      local got = call('BITFIELD', key, unpack(ops, 1, 4 * nops))
      for q = 1, #got do old[#old + 1] = got[q] end
      nops = 0
    end
    for _, j in ipairs(chunk) do
      local p, step = H1[j] % m, H2[j] % m
      for _ = 1, k do
        local x = 4 * nops
        ops[x + 1] = 'SET'; ops[x + 2] = 'u1'; ops[x + 3] = fmt('%d', p); ops[x + 4] = 1
        nops = nops + 1
        if nops == 1000 then flush() end
        p = p + step
        if p >= m then p = p - m end
      end
    end
    if nops > 0 then flush() end
    for q, j in ipairs(chunk) do
      local new = false
      for x = (q - 1) * k + 1, q * k do
        if old[x] == 0 then new = true; break end
      end
      if new then
        counts[top] = counts[top] + 1
        fresh[#fresh + 1] = string.sub(packed, 8 * j - 7, 8 * j)
      end
    end
    if counts[top] >= lv.cap and top < #levels then
      counts[top + 1] = 0
      allocate(top + 1)
    end
  end
end

if now > t then t = now end
local cs = table.concat(counts, ',')
call('HSET', meta, 't', fmt('%d', t), 'g', sig, 'c', cs)
call('PEXPIRE', meta, ttl)
for i = 1, #counts do
  if call('EXISTS', keyOf(i)) == 1 then call('PEXPIRE', keyOf(i), ttl) end
end
if mode == 'c' then
  if shipped == 0 then return table.concat(out) end
  local reply = { table.concat(out) }
  for i = 1, shipped do reply[i + 1] = call('GET', keyOf(i)) or '' end
  return reply
end
local started = 0
if #fresh > 0 and string.find(flags, 'j', 1, true) then
  if call('APPEND', KEYS[3], table.concat(fresh)) == 8 * #fresh then started = 1 end
  call('PEXPIRE', KEYS[3], ttl)
end
return { cs, started }
