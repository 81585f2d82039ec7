-- wrk script part: when LATENCY_FILE is set, a run's end writes its request count and its
-- latency distribution there (microseconds at quantiles, finest in the tail), so that the
-- runs against several servers at once can be read as one distribution of every request.
-- Used alone (GET /healthz) or loaded by the other scripts with dofile.
function write_latency(summary, latency)
    local path = os.getenv("LATENCY_FILE")
    if not path then return end
    local out = assert(io.open(path, "w"))
    out:write("requests ", summary.requests, "\n")
    local function at(q) out:write(string.format("%.3f %d\n", q, latency:percentile(q))) end
    for q = 1, 89 do at(q) end
    for tenth = 900, 989 do at(tenth / 10) end
    for hundredth = 9900, 9999 do at(hundredth / 100) end
    -- wrk gives 0 for the 100th percentile: the slowest request is its max.
    out:write(string.format("100.000 %d\n", latency.max))
    out:close()
end

done = write_latency
