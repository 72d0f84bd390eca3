-- wrk script: POST /session (enqueueOnly) with a unique session name per
-- request.  The signature does not cover the body, so the signed headers
-- given with -H stay valid for every request (for 15 minutes).
local n = 0
local prefix = os.getenv("BENCH_PREFIX") or "b"
local image = os.getenv("BENCH_IMAGE") or "bench/python:3.11"

request = function()
  n = n + 1
  local body = string.format('{"name":"%s-%d","image":"%s","enqueueOnly":true}', prefix, n, image)
  return wrk.format("POST", "/session", nil, body)
end
