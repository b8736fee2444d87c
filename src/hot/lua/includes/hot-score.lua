--[[ hot-score: the hot-ranking design's score, the one copy every hot script uses (hotView-9, hotRescore-1+3N,
  hotRestore-5+5N), evaluated in the order of src/hot/domain.ts `hotScore` so both give the same
  double for the same inputs:
    score = (alpha * pv + beta * uv) / (hours + base) ^ gamma
  hours = hours since publication (0 before it), from nowSec and pub, both epoch seconds;
  0 when the denominator is not positive (base > 0 and gamma > 0 keep it positive in practice).
]]
local function hotScore(nowSec, pub, pv, uv, alpha, beta, base, gamma)
  local hours = 0
  if nowSec > pub then hours = (nowSec - pub) / 3600 end
  local denominator = math.pow(hours + base, gamma)
  if denominator > 0 then return (alpha * pv + beta * uv) / denominator end
  return 0
end
