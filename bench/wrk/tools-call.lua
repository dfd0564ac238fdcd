-- wrk script: every request is a tools/call with a JSON-RPC id never used before (MCP forbids
-- reusing ids in a session), and every answer is checked, so a run never measures error pages.
--
-- Environment:
--   BENCH_TOOL      tool to call (default echo); arguments are {"message": "m<id>"}
--   BENCH_SESSIONS  comma-separated Mcp-Session-Id values, used round-robin by request (empty: none)
--   BENCH_PROGRESS  notifications/progress each answer must carry (sends a progressToken when > 0)
--   BENCH_VERSION   MCP-Protocol-Version header (omitted when empty)
--   BENCH_STATELESS 1: the 2026-07-28 stateless wire (Mcp-Method and Mcp-Name headers, and a _meta
--                   envelope with the protocol version and client capabilities)
--   BENCH_THREADS   wrk's -t, so ids from different threads never collide
--   BENCH_ID_BASE   added to every id, so successive runs on the same sessions never reuse one
--   BENCH_AUTHORIZATION  Authorization header of every request (empty: none)
--   BENCH_EXTRA     JSON members added to the arguments after "message" (empty: none), e.g. a table of rows
--   BENCH_REST      a REST path ending in a query parameter (e.g. /echo?message=): no MCP at all, every
--                   request is GET <path>m<id>, and its answer must be exactly the text "echo: m<id>"
--                   (the direct call an openapi upstream's row is compared with)
--   BENCH_VIA_CALL_TOOL 1: call the tool through tool search's call_tool {name, arguments} (catalogue: search)
--   BENCH_MESSAGE   the same message in every call instead of "m<id>" (a result cache's row), answered "echo: <it>"
--   BENCH_LIST      1: every request is a tools/list instead, and its answer must hold BENCH_EXPECT
--   BENCH_EXPECT    text every tools/list answer must contain (e.g. the last tool's "name":"…")
--
-- An answer counts as an error unless: status 200, its JSON-RPC id is one this thread sent and has
-- not seen answered yet, its text is exactly "echo: m<id>" (or BENCH_MESSAGE's; a list: it holds
-- BENCH_EXPECT), and it carries BENCH_PROGRESS progress
-- notifications. done() prints one parseable line:
--   BENCH_CHECK checked=<answers> errors=<bad answers> p50_us=<..> p99_us=<..>
-- and, when something failed, BENCH_SAMPLE <the first problem and the start of its body>.

local threads = {}
local thread_count = 0

function setup(thread)
  thread:set("tid", thread_count)
  thread_count = thread_count + 1
  table.insert(threads, thread)
end

function init(args)
  tool = os.getenv("BENCH_TOOL") or "echo"
  progress = tonumber(os.getenv("BENCH_PROGRESS") or "0") or 0
  stride = tonumber(os.getenv("BENCH_THREADS") or "1") or 1
  base = tonumber(os.getenv("BENCH_ID_BASE") or "0") or 0
  sessions = {}
  for s in string.gmatch(os.getenv("BENCH_SESSIONS") or "", "[^,]+") do
    table.insert(sessions, s)
  end
  local host = wrk.headers["Host"] or (wrk.host .. ":" .. wrk.port)
  local version = os.getenv("BENCH_VERSION") or ""
  head = "POST " .. wrk.path .. " HTTP/1.1\r\nHost: " .. host ..
    "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
  if version ~= "" then head = head .. "MCP-Protocol-Version: " .. version .. "\r\n" end
  local authorization = os.getenv("BENCH_AUTHORIZATION") or ""
  if authorization ~= "" then head = head .. "Authorization: " .. authorization .. "\r\n" end
  envelope = ""
  if os.getenv("BENCH_STATELESS") == "1" then
    if list then head = head .. "Mcp-Method: tools/list\r\n"
    else head = head .. "Mcp-Method: tools/call\r\nMcp-Name: " .. tool .. "\r\n" end
    envelope = '"io.modelcontextprotocol/protocolVersion":"' .. version ..
      '","io.modelcontextprotocol/clientCapabilities":{}'
  end
  extra = os.getenv("BENCH_EXTRA") or ""
  rest = os.getenv("BENCH_REST") or ""
  rest_head = " HTTP/1.1\r\nHost: " .. host .. "\r\nAccept: text/plain, application/json\r\n\r\n"
  via_call_tool = os.getenv("BENCH_VIA_CALL_TOOL") == "1"
  message = os.getenv("BENCH_MESSAGE") or ""
  list = os.getenv("BENCH_LIST") == "1"
  expect = os.getenv("BENCH_EXPECT") or ""
  if extra ~= "" then extra = "," .. extra end
  seq = 0
  checked = 0
  errors = 0
  sample = ""
  pending = {}
end

function request()
  seq = seq + 1
  local id = base + seq * stride + tid
  pending[id] = true
  if rest ~= "" then return "GET " .. rest .. "m" .. id .. rest_head end
  local meta = envelope
  if progress > 0 then
    if meta ~= "" then meta = meta .. "," end
    meta = meta .. '"progressToken":"p' .. id .. '"'
  end
  if meta ~= "" then meta = ',"_meta":{' .. meta .. '}' end
  local text = message
  if text == "" then text = "m" .. id end
  local arguments = '{"message":"' .. text .. '"' .. extra .. '}'
  local body
  if list then
    local params = "{}"
    if meta ~= "" then params = "{" .. string.sub(meta, 2) .. "}" end
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/list","params":' .. params .. '}'
  elseif via_call_tool then
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"' .. tool ..
      '","arguments":' .. arguments .. '}' .. meta .. '}}'
  else
    body = '{"jsonrpc":"2.0","id":' .. id .. ',"method":"tools/call","params":{"name":"' .. tool ..
      '","arguments":' .. arguments .. meta .. '}}'
  end
  local session = ""
  if #sessions > 0 then session = "Mcp-Session-Id: " .. sessions[(seq % #sessions) + 1] .. "\r\n" end
  return head .. session .. "Content-Length: " .. #body .. "\r\n\r\n" .. body
end

local function count(body, needle)
  local n, from = 0, 1
  while true do
    local at = string.find(body, needle, from, true)
    if at == nil then return n end
    n = n + 1
    from = at + #needle
  end
end

local function problem_of(status, body)
  if status ~= 200 then return "HTTP " .. status end
  if rest ~= "" then
    local echoed = tonumber(string.match(body, "^echo: m(%d+)$"))
    if echoed == nil then return "not an echo" end
    if not pending[echoed] then return "id " .. echoed .. " was not sent or was answered twice" end
    pending[echoed] = nil
    return nil
  end
  local id = tonumber(string.match(body, '"id":(%d+)'))
  if id == nil then return "no JSON-RPC id" end
  if not pending[id] then return "id " .. id .. " was not sent or was answered twice" end
  pending[id] = nil
  if list then
    if not string.find(body, expect, 1, true) then return "a list without " .. expect .. " for id " .. id end
    return nil
  end
  local text = message
  if text == "" then text = "m" .. id end
  if not string.find(body, '"echo: ' .. text .. '"', 1, true) then return "wrong text for id " .. id end
  if progress > 0 then
    local got = count(body, '"notifications/progress"')
    if got ~= progress then return got .. " progress notifications for id " .. id .. ", expected " .. progress end
  end
  return nil
end

function response(status, headers, body)
  checked = checked + 1
  local problem = problem_of(status, body or "")
  if problem ~= nil then
    errors = errors + 1
    if sample == "" then sample = problem .. ": " .. string.sub(body or "", 1, 300) end
  end
end

function done(summary, latency, requests)
  local total_checked, total_errors, first = 0, 0, ""
  for _, thread in ipairs(threads) do
    total_checked = total_checked + (thread:get("checked") or 0)
    total_errors = total_errors + (thread:get("errors") or 0)
    local s = thread:get("sample") or ""
    if first == "" then first = s end
  end
  io.write(string.format("BENCH_CHECK checked=%d errors=%d p50_us=%d p99_us=%d\n",
    total_checked, total_errors, latency:percentile(50), latency:percentile(99)))
  if first ~= "" then io.write("BENCH_SAMPLE " .. (string.gsub(first, "[\r\n]+", " ")) .. "\n") end
end
