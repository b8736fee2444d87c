--[[ readerSeen-3: the per-reader scalable Bloom filter of note 3
  KEYS[1]   the reader's bitmap (every sub-filter at its offset)
  KEYS[2]   its state HASH: t = virtual ms of the last activity, g = geometry signature,
            c = members per open sub-filter, comma-separated ('100000,1234')
  KEYS[3]   its journal: the packed hash pairs of the members added, in order (only with flag 'j')
  ARGV[1]   mode: 'c' check (refreshes the TTL), 'm' mark (adds; refreshes), 'd' describe (read only)
  ARGV[2]   now, virtual epoch ms
  ARGV[3]   ttl ms: the filter is gone once now - t >= ttl; keys also get PEXPIRE ttl (real time)
  ARGV[4]   geometry signature; a filter written under another one is dropped
  ARGV[5]   sub-filters 'offset,bits,hashes,capacity;' repeated, level 0 first
  ARGV[6]   N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  ARGV[7]   flags: 'g' guarded -- a reader with no state at all may have a checkpoint in PostgreSQL:
            answer '?' (nothing read or written) so the engine restores it first; 'j' journal the
            members a mark adds ('' = neither: an absent filter is simply empty)
  returns   '?' for 'c' or 'm' when guarded and the state HASH does not exist
            'c': N chars, '1' = probably seen, '0' = not seen
            'm': { the counts after the mark ('c' field), 1 if this mark started the journal else 0 }
            'd': { t or '', c or '', bitmap length in bytes }
  A filter is live when its state exists, has this signature and t > now - ttl; otherwise it answers
  '0' for all, and a check or mark deletes what is left of it (a mark then starts it empty). A member is
  present when all its k_i bits are set in any open sub-filter; a mark adds a member that is not
  present to the newest one, and opens the next sub-filter when that one holds its capacity (past the
  last level given, the last one keeps filling). t only grows. The journal gets the members added, in
  the order they were added, so replaying the checkpointed journals (src/seen/seen-fold.ts)
  rebuilds the same bits and counts; it gets the reader's time to live.
  A live state may have no bitmap (a reader restored with nothing checkpointed gets its state only):
  it answers '0' for all, and its first mark allocates the bitmap.
  A sub-filter's bytes are allocated whole when it opens (one SET of the bitmap grown to its end): a
  string grown by SETBIT gets twice the bytes it needs (Redis's sds preallocation below 1 MB), 257 KB
  instead of 138 KB for the first sub-filter at n0 = 100,000 (bench/README.md).
  Layout: no RedisBloom, a plain bitmap string per reader written with SETBIT and read with GETBIT,
  hashing done by the engine (MurmurHash3 pairs packed as 8 little-endian bytes per member, as in
  seenCheck-1+2D). Sub-filter geometry comes from the engine (src/seen/scalable-bloom.ts) in
  every call, so Lua computes nothing but positions: g_0 = h1 mod m_i, g_(j+1) = g_j + (h2 mod m_i),
  minus m_i once it reaches m_i -- exact in Lua's doubles and equal to the in-process adapter's walk.
]]
local bitmap, meta = KEYS[1], KEYS[2]
local mode = ARGV[1]
local now = tonumber(ARGV[2])
local ttl = tonumber(ARGV[3])
local sig = ARGV[4]
local flags = ARGV[7] or ''
local call = redis.call
local fmt = string.format
local sunpack = struct.unpack

local levels = {}
for off, m, k, cap in string.gmatch(ARGV[5], '(%d+),(%d+),(%d+),(%d+);') do
  levels[#levels + 1] = { tonumber(off), tonumber(m), tonumber(k), tonumber(cap) }
end

if mode ~= 'd' and string.find(flags, 'g', 1, true) and call('EXISTS', meta) == 0 then return '?' end
local journal = mode == 'm' and string.find(flags, 'j', 1, true) ~= nil
local state = call('HMGET', meta, 't', 'g', 'c')
local t, c = tonumber(state[1]), state[3]
local live = t ~= nil and state[2] == sig and c ~= false and (now - t) < ttl

if mode == 'd' then
  if not live then return { '', '', 0 } end
  return { state[1], c, call('STRLEN', bitmap) }
end
-- the bitmap grown, exactly, to the end of sub-filter i (its bytes zero). A new bitmap is created by
-- SETRANGE at its last byte: Redis allocates it zeroed at exactly that length, with no Lua string built
-- (138 KB at n0 = 100,000: ~0.2 ms instead of ~0.4-1.2 ms). Growing one is GET + SET of the longer
-- string, because SETRANGE on an existing string preallocates (sds doubles strings below 1 MB).
local function allocate(i)
  local lv = levels[i]
  local want = math.ceil((lv[1] + lv[2]) / 8)
  local have = call('STRLEN', bitmap)
  if have >= want then return end
  if have == 0 then
    call('SETRANGE', bitmap, want - 1, '\0')
  else
    call('SET', bitmap, call('GET', bitmap) .. string.rep('\0', want - have))
  end
end

if not live then
  -- a filter gone (idle for the TTL, or another geometry): its journal goes with it, so no member of
  -- the dead filter is ever checkpointed under the new one
  call('DEL', bitmap, meta, KEYS[3])
  if mode == 'c' then return string.rep('0', #ARGV[6] / 8) end
  t, c = now, '0'
end

local counts = {}
for x in string.gmatch(c, '(%d+)') do counts[#counts + 1] = tonumber(x) end
-- a new filter, or a live state without its bitmap (restored empty: readerSeenRestore-2)
if mode == 'm' and call('EXISTS', bitmap) == 0 then allocate(#counts) end

local function has(h1, h2)
  for i = 1, #counts do
    local lv = levels[i]
    local off, m, k = lv[1], lv[2], lv[3]
    local g, step = h1 % m, h2 % m
    local all = true
    for j = 1, k do
      if call('GETBIT', bitmap, fmt('%d', off + g)) == 0 then all = false; break end
      g = g + step
      if g >= m then g = g - m end
    end
    if all then return true end
  end
  return false
end

local packed = ARGV[6]
local n = #packed / 8
local out = {}
local fresh = {}
for i = 1, n do
  local h1, h2 = sunpack('<I4I4', packed, 8 * i - 7)
  local present = has(h1, h2)
  if mode == 'c' then
    out[i] = present and '1' or '0'
  elseif not present then
    local top = #counts
    local lv = levels[top]
    local off, m, k = lv[1], lv[2], lv[3]
    local g, step = h1 % m, h2 % m
    for j = 1, k do
      call('SETBIT', bitmap, fmt('%d', off + g), 1)
      g = g + step
      if g >= m then g = g - m end
    end
    counts[top] = counts[top] + 1
    if journal then fresh[#fresh + 1] = string.sub(packed, 8 * i - 7, 8 * i) end
    if counts[top] >= lv[4] and top < #levels then
      counts[top + 1] = 0
      allocate(top + 1)
    end
  end
end

if now > t then t = now end
local cs = table.concat(counts, ',')
call('HSET', meta, 't', fmt('%d', t), 'g', sig, 'c', cs)
call('PEXPIRE', meta, ttl)
if call('EXISTS', bitmap) == 1 then call('PEXPIRE', bitmap, ttl) end
if mode == 'c' then return table.concat(out) end
local started = 0
if #fresh > 0 then
  if call('APPEND', KEYS[3], table.concat(fresh)) == 8 * #fresh then started = 1 end
  call('PEXPIRE', KEYS[3], ttl)
end
return { cs, started }
