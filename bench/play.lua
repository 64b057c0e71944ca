-- wrk script of bench/wrk.py for hosted sessions: thread n, on its one connection (wrk -tN
-- -cN), plays the moves of DIRECTORY/n.tsv in order (a move a line: path, Authorization,
-- body, tab-separated) from the line that line n of STARTS_FILE names. It goes on to the
-- next move only once one is answered 200: wrk may ask for a request it never sends. Ends
-- as bench/post.lua does, whose `setup`, `done` and gate it shares.
--   wrk -tN -cN -s bench/play.lua URL -- DIRECTORY STARTS_FILE
dofile((debug.getinfo(1, "S").source:sub(2):gsub("play%.lua$", "post.lua")))

function init(args)
  local line = 0
  for start in io.lines(args[2]) do
    if line == id then turn = tonumber(start) end
    line = line + 1
  end
  for move in io.lines(args[1] .. "/" .. id .. ".tsv") do
    local path, authorization, body = move:match("([^\t]*)\t([^\t]*)\t(.*)")
    prepared[#prepared + 1] = wrk.format("POST", path, {
      ["Content-Type"] = "application/json", ["Authorization"] = authorization}, body)
  end
  open_gate_if_last()
end

function request()
  wait_at_gate()
  return prepared[turn + 1]
end

function response(status, headers, body)
  if status == 200 then turn = turn + 1 end
end
