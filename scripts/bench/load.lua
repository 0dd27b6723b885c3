-- wrk script for npm run bench: POSTs to the URL given to wrk, and prints one JSON line of results.
--   BENCH_BODY      a fixed body for every request (kept static, so wrk builds the request once);
--   BENCH_FIRST_ID  otherwise: a new plant per request, ids counting up from this one.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end

local body = os.getenv("BENCH_BODY")
if body then
  wrk.body = body
else
  local id = tonumber(os.getenv("BENCH_FIRST_ID"))
  request = function()
    id = id + 1
    return wrk.format(nil, nil, nil, '{"id":' .. id .. ',"name":"Boston fern","tag":"indoor"}')
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\n{"requests":%d,"seconds":%f,"p50_ms":%f,"p99_ms":%f,"socket_errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    e.connect + e.read + e.write + e.timeout, e.status))
end
