-- wrk script: POST /v1/transactions with a secret key, each request spending a token made by
-- the tokens run (TOKENS_FILE), every thread its own share. Environment: CAPTURE_SK,
-- TOKENS_FILE, WRK_THREADS; IDEMPOTENCY_KEYS=1 sends each charge with an Idempotency-Key of its
-- own, as a client that may retry does.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("CAPTURE_SK")

dofile("scripts/bench-api/latency.lua")

local count = 0

function setup(thread)
    thread:set("share", count)
    count = count + 1
end

function init(args)
    local threads = tonumber(os.getenv("WRK_THREADS"))
    tokens = {}
    local index = 0
    for line in io.lines(os.getenv("TOKENS_FILE")) do
        if index % threads == share then tokens[#tokens + 1] = line end
        index = index + 1
    end
    following = 1
    keyed = os.getenv("IDEMPOTENCY_KEYS") == "1"
end

function request()
    local token = tokens[following] or "tok_ran_out_of_tokens_for_this_run"
    following = following + 1
    local headers = nil
    if keyed then
        headers = {}
        for name, value in pairs(wrk.headers) do headers[name] = value end
        headers["Idempotency-Key"] = "charge-" .. token
    end
    return wrk.format(nil, nil, headers, '{"token": "' .. token .. '", "amount": 1999, "currency": "EUR"}')
end
