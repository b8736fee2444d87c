--[[ readerSeenProbe-2+N: read only -- which sub-filter of one reader's scalable Bloom filter holds each
  of N members (the explain API); the keys and geometry of readerSeen-3+N
  KEYS[1]     sub-filter 0
  KEYS[2]     the state HASH: t = virtual ms of the last activity, g = signature, c = members per open
              sub-filter ('100,200,37')
  KEYS[2+i]   i = 1..N: sub-filter i (0-based level i)
  ARGV[1]     now, virtual epoch ms;  ARGV[2] ttl ms (the filter is gone once now - t >= ttl)
  ARGV[3]     the signature this call runs under
  ARGV[4]     its sub-filters, 'offset,bits,hashes,capacity;' repeated, level 0 first (offset unused here)
  ARGV[5]     members as packed hash pairs: (h1, h2), little-endian uint32 each (8 bytes per member)
  returns     '' when the reader has no live filter;
              { '?g', sig } when its live filter has another signature (run again under sig);
              { c, levels } otherwise: the counts, and per member the newest open sub-filter (0-based)
              holding all k bits of it, or -1, comma-separated ('0,-1,3')
  How: newest sub-filter first, a member's k positions g_j = (h1 + j*h2) mod m_i read by one
  BITFIELD_RO. Writes nothing: no TTL refresh, no PEXPIRE, no restore.
]]
local now = tonumber(ARGV[1])
local ttl = tonumber(ARGV[2])
local levels = {}
for m, k in string.gmatch(ARGV[4], '%d+,(%d+),(%d+),%d+;') do
  levels[#levels + 1] = { m = tonumber(m), k = tonumber(k) }
end
local state = redis.call('HMGET', KEYS[2], 't', 'g', 'c')
local t, g, c = tonumber(state[1]), state[2], state[3]
if t == nil or c == false or g == false or (now - t) >= ttl then return '' end
if g ~= ARGV[3] then return { '?g', g } end
local open = 0
for _ in string.gmatch(c, '%d+') do open = open + 1 end
if open > #levels then open = #levels end
local packed = ARGV[5]

-- the newest open sub-filter holding all k bits of (h1, h2), 0-based, or -1
local function holder(h1, h2)
  for i = open, 1, -1 do
    local lv = levels[i]
    local key = KEYS[1]
    if i > 1 then key = KEYS[1 + i] end
    local ops = {}
    local p, step = h1 % lv.m, h2 % lv.m
    for j = 1, lv.k do
      ops[3 * j - 2] = 'GET'; ops[3 * j - 1] = 'u1'; ops[3 * j] = string.format('%d', p)
      p = p + step
      if p >= lv.m then p = p - lv.m end
    end
    local bits = redis.call('BITFIELD_RO', key, unpack(ops))
    local all = true
    for j = 1, lv.k do
      if bits[j] ~= 1 then all = false; break end
    end
    if all then return i - 1 end
  end
  return -1
end

local out = {}
for q = 1, #packed / 8 do
  local h1, h2 = struct.unpack('<I4I4', packed, 8 * q - 7)
  out[q] = holder(h1, h2)
end
return { c, table.concat(out, ',') }
