-- wrk script of bench/wrk.py: POSTs the JSON bodies of a file (one a line) to a path, in
-- turn, and ends with one line "BENCH {...}": the requests, the seconds, the errors and
-- every latency wrk recorded (microseconds, with how many times each was seen), so that
-- slices taken in turn add up to exact percentiles, and where each thread got to (`turn`).
--   [WRK_GATE=FILE WRK_THREADS=N] wrk -tN -s bench/post.lua URL -- PATH BODIES_FILE
local ffi = require("ffi")
ffi.cdef [[ int access(const char *path, int mode); int usleep(unsigned int usec); ]]
local threads = {}
prepared = {}
turn = 0 -- a global, so that done() can read each thread's

-- The gate. wrk starts a thread as soon as its init() has run, one thread after another, and
-- starts its clock only once the last is started: on a busy machine, threads started early
-- would send requests for a good part of a second that count against no time at all (a load
-- whose init reads more would look faster). So each thread holds its first request until
-- the last thread's init has opened the gate, a file named by WRK_GATE, which must not exist
-- yet; WRK_THREADS says how many threads there are (bench/wrk.py sets both; without them,
-- a run by hand, there is no gate).
local gate, last = os.getenv("WRK_GATE"), tonumber(os.getenv("WRK_THREADS") or "1") - 1
local closed = gate ~= nil
-- wrk asks thread 0 for one request on its main thread before starting any (to check it),
-- and never sends it: that call must not wait for a gate the later threads have yet to
-- open, and wait_at_gate() returns true for it alone.
local checked = false

function open_gate_if_last()
  if gate and id == last then io.open(gate, "w"):close() end
end

function wait_at_gate()
  if id == 0 and not checked then
    checked = true
    return true
  end
  while closed do
    closed = ffi.C.access(gate, 0) ~= 0
    -- A millisecond, not less: 63 threads polling every 100 us slowed the inits still
    -- to run, and the connections opened first sat idle toward gunicorn's keep-alive.
    if closed then ffi.C.usleep(1000) end
  end
end

function setup(thread)
  thread:set("id", #threads)
  threads[#threads + 1] = thread
end

function init(args)
  for line in io.lines(args[2]) do
    prepared[#prepared + 1] = wrk.format("POST", args[1], {["Content-Type"] = "application/json"}, line)
  end
  turn = math.random(#prepared) -- each thread starts somewhere else in the corpus
  open_gate_if_last()
end

function request()
  wait_at_gate()
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
