-- wrk script: POST /v1/tokens with a publishable key, keeping the ids of the tokens made so
-- that the transactions run can spend them. Environment: CAPTURE_PK, TOKENS_FILE.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("CAPTURE_PK")
wrk.body = '{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}'

local threads = {}

function setup(thread)
    table.insert(threads, thread)
end

function init(args)
    made = {}
end

function response(status, headers, body)
    if status == 201 then
        local id = body:match('"id":"(tok_%w+)"')
        if id then made[#made + 1] = id end
    end
end

function done(summary, latency, requests)
    local out = assert(io.open(os.getenv("TOKENS_FILE"), "w"))
    for _, thread in ipairs(threads) do
        for _, id in ipairs(thread:get("made")) do out:write(id, "\n") end
    end
    out:close()
end
