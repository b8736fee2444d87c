--[[ seenProbe-D: read only -- which of D day bitmaps of one seen-filter shard hold each of N members,
  and how full each bitmap is (the explain API: which day holds an item, and that filter's rate)
  KEYS[1..D]  D day bitmaps of one shard and layout (one hash tag, any order)
  ARGV[1]     m, bits per bitmap
  ARGV[2]     k, hashes per member
  ARGV[3]     N members as packed hash pairs: N x (h1, h2), little-endian uint32 each (8N bytes)
  returns     { c_1, a_1, ..., c_D, a_D }: for day KEYS[d], c_d = BITCOUNT of the bitmap (the engine turns
              it into (c/m)^k), or -1 when the key does not exist (expired or never written; a_d is then
              ''); a_d = N chars, '1' when all k bits of member j are set on that day, '0' when not
  How: the k positions g_i = (h1 + i*h2) mod m (Kirsch & Mitzenmacher 2006), walked as in
  seenCheck-1+2D, read by one BITFIELD_RO per member and day (explain probes a few members; the
  walk of a read-only refresh a round of them). Writes nothing, refreshes no TTL. BITCOUNT reads
  the whole bitmap (~0.1 ms per MB): a cost of an explain, never of the serving path.
]]
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local packed = ARGV[3]
local n = #packed / 8
local ops = {}
for j = 1, n do
  local h1, h2 = struct.unpack('<I4I4', packed, 8 * j - 7)
  local step = h2 % m
  local g = h1 % m
  local o = {}
  for i = 1, k do
    o[3 * i - 2] = 'GET'; o[3 * i - 1] = 'u1'; o[3 * i] = string.format('%d', g)
    g = g + step
    if g >= m then g = g - m end
  end
  ops[j] = o
end
local out = {}
for d = 1, #KEYS do
  local key = KEYS[d]
  if redis.call('EXISTS', key) == 0 then
    out[2 * d - 1] = -1
    out[2 * d] = ''
  else
    local answers = {}
    for j = 1, n do
      local bits = redis.call('BITFIELD_RO', key, unpack(ops[j]))
      local all = '1'
      for i = 1, k do
        if bits[i] ~= 1 then all = '0'; break end
      end
      answers[j] = all
    end
    out[2 * d - 1] = redis.call('BITCOUNT', key)
    out[2 * d] = table.concat(answers)
  end
end
return out
