-- wrk script of bench/wrk.py: POSTs the JSON bodies of a file (one a line) to a path, in
-- turn, and ends with one line "BENCH {...}": the requests, the seconds, the errors and
-- every latency wrk recorded (microseconds, with how many times each was seen), so that
-- slices taken in turn add up to exact percentiles, and where each thread got to (`turn`).
--   wrk -s bench/post.lua URL -- PATH BODIES_FILE
local threads = {}
prepared = {}
turn = 0 -- a global, so that done() can read each thread's

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  for line in io.lines(args[2]) do
    prepared[#prepared + 1] = wrk.format("POST", args[1], {["Content-Type"] = "application/json"}, line)
  end
  turn = math.random(#prepared) -- each thread starts somewhere else in the corpus
end

function request()
  turn = turn % #prepared + 1
  return prepared[turn]
end

function done(summary, latency, requests)
  local seen, turns = {}, {}
  for i = 1, #latency do
    local value, count = latency(i)
    seen[#seen + 1] = string.format("[%d,%d]", value, count)
  end
  for _, thread in ipairs(threads) do turns[#turns + 1] = tostring(thread:get("turn")) end
  local errors = summary.errors
  io.write(string.format(
    'BENCH {"requests":%d,"microseconds":%d,"status_errors":%d,"socket_errors":%d,"latency":[%s],"turns":[%s]}\n',
    summary.requests, summary.duration, errors.status,
    errors.connect + errors.read + errors.write + errors.timeout, table.concat(seen, ","),
    table.concat(turns, ",")))
end
