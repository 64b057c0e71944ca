-- wrk script of bench/wrk.py for hosted sessions: thread n, on its one connection (wrk -tN
-- -cN), plays the moves of DIRECTORY/n.tsv in order (a move a line: path, Authorization,
-- body, tab-separated) from the line that line n of STARTS_FILE names. wrk asks a
-- connection for its next request only once the last one is answered, so each call plays
-- the next move, but for wrk's check of the script, a call it never sends (the gate tells
-- it). No `response` callback: with one, wrk reads every answer's headers and body into
-- Lua, about 13 us of CPU a request that the stateless load's wrk does not spend. wrk
-- counts an answer of 400 or more as an error, and the benchmark stops on any. Ends as
-- bench/post.lua does, whose `setup`, `done` and gate it shares.
--   wrk -tN -cN -s bench/play.lua URL -- DIRECTORY STARTS_FILE
dofile((debug.getinfo(1, "S").source:sub(2):gsub("play%.lua$", "post.lua")))

function init(args)
  local line = 0
  for start in io.lines(args[2]) do
    if line == id then turn = tonumber(start) end
    line = line + 1
  end
  local number = 0
  for move in io.lines(args[1] .. "/" .. id .. ".tsv") do
    number = number + 1
    if number > turn then -- the moves of earlier slices are not formatted again
      local path, authorization, body = move:match("([^\t]*)\t([^\t]*)\t(.*)")
      prepared[number] = wrk.format("POST", path, {
        ["Content-Type"] = "application/json", ["Authorization"] = authorization}, body)
    end
  end
  open_gate_if_last()
end

function request()
  if wait_at_gate() then return prepared[turn + 1] end -- wrk's check: not sent
  turn = turn + 1
  return prepared[turn]
end
