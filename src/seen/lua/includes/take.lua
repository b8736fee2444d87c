--[[ take: move a journal into its 'taken' key under a lease (the PostgreSQL checkpoint's first step)
  take(journal, taken, lease, token, leaseMs, kind) -> status, content, pttl
    journal   a STRING of packed pairs (kind 'str') or a SET of members (kind 'set')
    taken     what a checkpoint took and has not acknowledged yet (same type)
    lease     the token of the checkpoint holding 'taken', with a time to live of leaseMs
    status    0 nothing to take; 1 taken (content = what an earlier, unacknowledged take left in
              'taken' followed by the journal); 2 another checkpoint's lease is live: nothing returned
    content   the string, or the SET's members as an array
    pttl      the time to live of 'taken' in ms (-1: none)
  A take whose checkpoint died keeps 'taken' until its lease expires; the next take then gets it
  back with whatever was journalled since, so nothing taken is ever lost, only written twice
  (the checkpoint's merges are idempotent: OR of bits, replay that skips members present).
]]
local function take(journal, taken, lease, token, leaseMs, kind)
  local call = redis.call
  local holder = call('GET', lease)
  if holder and holder ~= token then return 2, '', -1 end
  local hasJournal = call('EXISTS', journal) == 1
  local hasTaken = call('EXISTS', taken) == 1
  if not hasJournal and not hasTaken then
    if holder then call('DEL', lease) end
    return 0, '', -1
  end
  if hasJournal then
    if not hasTaken then
      call('RENAME', journal, taken) -- keeps the journal's time to live
    else
      local keep = math.max(call('PTTL', taken), call('PTTL', journal))
      if kind == 'str' then
        call('APPEND', taken, call('GET', journal))
      else
        call('SUNIONSTORE', taken, taken, journal)
      end
      call('DEL', journal)
      if keep > 0 then call('PEXPIRE', taken, keep) end
    end
  end
  call('SET', lease, token, 'PX', leaseMs)
  local content
  if kind == 'str' then content = call('GET', taken) else content = call('SMEMBERS', taken) end
  return 1, content, call('PTTL', taken)
end
