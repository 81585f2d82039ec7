-- wrk script: POST /v1/tokens with a publishable key. With COLLECT_TOKENS=1 it also keeps the
-- ids of the tokens made, in TOKENS_FILE, for the transactions run to spend; the measured run
-- does not, so that the client's own work (reading every answer in Lua) is not counted
-- against the server. Environment: CAPTURE_PK, COLLECT_TOKENS, TOKENS_FILE.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("CAPTURE_PK")
wrk.body = '{"number": "4242424242424242", "exp_month": 12, "exp_year": 2030, "cvc": "123"}'
dofile("scripts/bench-api/latency.lua")

if os.getenv("COLLECT_TOKENS") == "1" then
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
end
