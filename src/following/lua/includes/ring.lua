--[[ ring: an inbox or outbox as ONE string of packed tids (Freshet's encoding of the following design's boxes).
  Layout: a 17-byte header, then P slots of W = 7 bytes.
    header   version (1 byte, = 1) | n, entries held (3 bytes) | h, slot of the oldest (3 bytes) |
             P, slots (3 bytes) | top, the newest tid (7 bytes); big-endian
    entry k  (1 = oldest .. n = newest; tids ascending) lives in slot (h + k - 1) mod P
    tid      7 bytes big-endian: tids are integers below 2^53 (src/following/domain.ts MAX_TID) < 2^56,
             and Lua's doubles hold every one of them exactly
  800 tids take 5,617 bytes (MEMORY USAGE ~6.2 KB on Redis 7) where a ZSET took ~97 KB (skiplist).
  Why a ring: a new tid goes into the slot after the newest, and once the ring is full it overwrites the
  oldest (the trim) -- a push is two or three GETRANGE/SETRANGE of a few bytes in place (the header says
  whether the tid is the newest), never a copy of the whole
  string (a 5.6 KB Lua string costs ~7 us of Redis time, most of it Lua's garbage collector). Reads find a
  bound by an exponential search from the newest entry, then a binary one, one GETRANGE per probe, and take
  a page with one or two GETRANGEs. Rewrites -- a merge, a removal, a growth of P, a legacy conversion --
  write the whole string linear (h = 0). An absent key is an empty box.
  ringOpen(key)                  the box {key, n, h, P, top}; a ZSET there (members = scores = tids: the
                                 encoding of earlier versions) is converted in place on this first
                                 touch, keeping every entry and the key's time to live (converted = true)
  tidAt(b, k)                    entry k
  countBelow(b, t)               how many entries are < t (exponential search from the newest, then binary)
  countBetween(b, t, lo, hi)     the same when entries 1..lo are known < t and entry hi >= t (binary)
  readRange(b, i, j)             entries i..j (i <= j) as packed bytes, ascending
  writeRange(b, k, bytes)        writes packed entries from entry k on (in place; the caller keeps n)
  writeHeader(b)                 stores n, h, P and top
  decodeAll(b)                   every entry, ascending, as a Lua table of numbers
  ringWrite(key, list, cap)      rewrites the box from list (ascending numbers) with cap >= #list slots,
                                 keeping the key's time to live; an empty list deletes the key;
                                 returns the new box
  raiseFloor(hkey, floor, t)     the floor raised to t when t is above it (stored in HASH hkey)
]]
local W = 7
local HEADER = 17
local VERSION = 1
-- entries per struct.pack / struct.unpack call (far below Lua's C stack limit)
local CHUNK = 500

local function packTid(t)
  return struct.pack('>I7', t)
end

local function slotOffset(b, k)
  return HEADER + ((b.h + k - 1) % b.P) * W
end

local function tidAt(b, k)
  local off = slotOffset(b, k)
  return (struct.unpack('>I7', redis.call('GETRANGE', b.key, off, off + W - 1)))
end

-- Binary search between entries known below t (1..lo) and entry hi, known >= t: how many are < t.
local function countBetween(b, t, lo, hi)
  while hi - lo > 1 do
    local mid = math.floor((lo + hi) / 2)
    if tidAt(b, mid) < t then lo = mid else hi = mid end
  end
  return lo
end

local function countBelow(b, t)
  local n = b.n
  if n == 0 or b.top < t then return n end
  -- gallop down from the newest: entries 1..lo are < t (lo = 0: none known), entry hi is >= t
  local hi, step = n, 1
  local lo = hi - step
  while lo >= 1 and tidAt(b, lo) >= t do
    hi = lo
    step = step * 2
    lo = hi - step
  end
  if lo < 0 then lo = 0 end
  return countBetween(b, t, lo, hi)
end

local function readRange(b, i, j)
  local first = (b.h + i - 1) % b.P
  local count = j - i + 1
  local head = math.min(count, b.P - first)
  local s = redis.call('GETRANGE', b.key, HEADER + first * W, HEADER + (first + head) * W - 1)
  if head < count then
    s = s .. redis.call('GETRANGE', b.key, HEADER, HEADER + (count - head) * W - 1)
  end
  return s
end

local function writeRange(b, k, bytes)
  local first = (b.h + k - 1) % b.P
  local count = #bytes / W
  local head = math.min(count, b.P - first)
  if head == count then
    redis.call('SETRANGE', b.key, HEADER + first * W, bytes)
  else
    redis.call('SETRANGE', b.key, HEADER + first * W, bytes:sub(1, head * W))
    redis.call('SETRANGE', b.key, HEADER, bytes:sub(head * W + 1))
  end
end

local function writeHeader(b)
  redis.call('SETRANGE', b.key, 0, struct.pack('>BI3I3I3I7', VERSION, b.n, b.h, b.P, b.top))
end

local function decodeAll(b)
  local out = {}
  if b.n == 0 then return out end
  local s = readRange(b, 1, b.n)
  for first = 1, b.n, CHUNK do
    local last = math.min(b.n, first + CHUNK - 1)
    local vals = { struct.unpack('>' .. string.rep('I7', last - first + 1), s, (first - 1) * W + 1) }
    for i = 1, last - first + 1 do out[first + i - 1] = vals[i] end -- the value after them is the next position
  end
  return out
end

local function ringWrite(key, list, cap)
  local n = #list
  if n == 0 then
    redis.call('DEL', key)
    return { key = key, n = 0, h = 0, P = 0, top = 0 }
  end
  local parts = { struct.pack('>BI3I3I3I7', VERSION, n, 0, cap, list[n]) }
  for first = 1, n, CHUNK do
    local last = math.min(n, first + CHUNK - 1)
    parts[#parts + 1] = struct.pack('>' .. string.rep('I7', last - first + 1), unpack(list, first, last))
  end
  if cap > n then parts[#parts + 1] = string.rep('\0', (cap - n) * W) end
  redis.call('SET', key, table.concat(parts), 'KEEPTTL')
  return { key = key, n = n, h = 0, P = cap, top = list[n] }
end

local function ringOpen(key)
  local head = redis.pcall('GETRANGE', key, 0, HEADER - 1)
  if type(head) == 'string' then
    if head == '' then return { key = key, n = 0, h = 0, P = 0, top = 0 } end
    if #head ~= HEADER or head:byte(1) ~= VERSION then error('not a packed box of version ' .. VERSION .. ': ' .. key) end
    local _, n, h, P, top = struct.unpack('>BI3I3I3I7', head)
    return { key = key, n = n, h = h, P = P, top = top }
  end
  if redis.call('TYPE', key).ok ~= 'zset' then error(head.err) end
  -- a ZSET of an earlier version: convert it, keeping every entry and the time to live
  local members = redis.call('ZRANGE', key, 0, -1) -- ascending by score = tid
  local list = {}
  for i = 1, #members do list[i] = tonumber(members[i]) end
  local ttl = redis.call('PTTL', key)
  redis.call('DEL', key)
  local b = ringWrite(key, list, #list)
  if ttl > 0 and b.n > 0 then redis.call('PEXPIRE', key, ttl) end
  b.converted = true
  return b
end

local function raiseFloor(hkey, floor, t)
  if t <= floor then return floor end
  redis.call('HSET', hkey, 'floor', string.format('%d', t))
  return t
end
