--[[ seenProbe-D: read only -- is one member in each of D day bitmaps of one seen-filter shard, and how
  full is each (the explain API: which day holds it, and that filter's false-positive rate)
  KEYS[1..D]  D day bitmaps of one shard and layout (one hash tag, any order)
  ARGV[1]     m, bits per bitmap
  ARGV[2]     k, hashes per member
  ARGV[3]     the member as one packed hash pair: (h1, h2), little-endian uint32 each (8 bytes)
  returns     { s_1, c_1, ..., s_D, c_D }: for day KEYS[d], s_d = 1 when all k bits of the member are
              set, 0 when not, -1 when the key does not exist (expired or never written; c_d is then 0);
              c_d = BITCOUNT of the bitmap (the engine turns it into (c/m)^k)
  How: the k positions g_i = (h1 + i*h2) mod m (Kirsch & Mitzenmacher 2006), walked as in
  seenCheck-1+2D, read by one BITFIELD_RO per day. Writes nothing, refreshes no TTL. BITCOUNT reads the
  whole bitmap (~0.1 ms per MB): a cost for one explain, never on the serving path.
]]
local m = tonumber(ARGV[1])
local k = tonumber(ARGV[2])
local h1, h2 = struct.unpack('<I4I4', ARGV[3])
local step = h2 % m
local ops = {}
local g = h1 % m
for i = 1, k do
  ops[3 * i - 2] = 'GET'; ops[3 * i - 1] = 'u1'; ops[3 * i] = string.format('%d', g)
  g = g + step
  if g >= m then g = g - m end
end
local out = {}
for d = 1, #KEYS do
  local key = KEYS[d]
  if redis.call('EXISTS', key) == 0 then
    out[2 * d - 1] = -1
    out[2 * d] = 0
  else
    local bits = redis.call('BITFIELD_RO', key, unpack(ops))
    local all = 1
    for i = 1, k do
      if bits[i] ~= 1 then all = 0; break end
    end
    out[2 * d - 1] = all
    out[2 * d] = redis.call('BITCOUNT', key)
  end
end
return out
