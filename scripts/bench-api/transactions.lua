-- wrk script: POST /v1/transactions with a secret key, each request spending a token made by
-- the tokens run (TOKENS_FILE), every thread its own share. Environment: CAPTURE_SK,
-- TOKENS_FILE, WRK_THREADS.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("CAPTURE_SK")

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
end

function request()
    local token = tokens[following] or "tok_ran_out_of_tokens_for_this_run"
    following = following + 1
    return wrk.format(nil, nil, nil, '{"token": "' .. token .. '", "amount": 1999, "currency": "EUR"}')
end
