-- wrk script for npm run bench: POSTs to the URL given to wrk, and prints one JSON line of results.
--   BENCH_METHOD       GET: GETs the URL instead, with no body;
--   BENCH_BODY         a fixed body for every request (kept static, so wrk builds the request once);
--   BENCH_FIRST_ID     otherwise: a new plant per request, ids counting up from this one.
--   BENCH_TOKEN        the bearer token of every request; or
--   BENCH_TOKENS_FILE  a file of tokens, one a line: each request the next, each wrk thread its own
--                      share (the n-th of BENCH_LOAD_THREADS takes every n-th token), round and round.
local get = os.getenv("BENCH_METHOD") == "GET"
wrk.method = get and "GET" or "POST"
if not get then wrk.headers["Content-Type"] = "application/json" end
local token = os.getenv("BENCH_TOKEN")
if token and token ~= "" then wrk.headers["Authorization"] = "Bearer " .. token end

local threads = 0
function setup(thread)
  thread:set("index", threads)
  threads = threads + 1
end

local tokens_file = os.getenv("BENCH_TOKENS_FILE")
local tokens = nil
local next_token = 0
function init(args)
  if tokens_file and tokens_file ~= "" then
    tokens = {}
    for line in io.lines(tokens_file) do tokens[#tokens + 1] = line end
    next_token = index or 0
  end
end

local body = os.getenv("BENCH_BODY")
if get then
  wrk.body = nil
elseif body and not (tokens_file and tokens_file ~= "") then
  wrk.body = body
else
  local id = tonumber(os.getenv("BENCH_FIRST_ID") or "1")
  local stride = tonumber(os.getenv("BENCH_LOAD_THREADS") or "1")
  request = function()
    id = id + 1
    local headers = nil
    if tokens then
      headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. tokens[next_token % #tokens + 1] }
      next_token = next_token + stride
    end
    return wrk.format(nil, nil, headers, body or ('{"id":' .. id .. ',"name":"Boston fern","tag":"indoor"}'))
  end
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\n{"requests":%d,"seconds":%f,"p50_ms":%f,"p99_ms":%f,"socket_errors":%d,"non_2xx":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(99) / 1e3,
    e.connect + e.read + e.write + e.timeout, e.status))
end
