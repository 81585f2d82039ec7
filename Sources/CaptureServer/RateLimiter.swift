import CardCapture
import Synchronization

/// Token buckets by key: each key may take `perMinute` a minute on average and up to `burst`
/// at once. Card testing (thousands of tokens from one publishable key and address in
/// seconds) is stopped at the door, before the request's body is read.
///
/// The table holds one small entry per key seen lately. A full bucket is the same as no
/// entry, so those are dropped first when the table reaches `maximumKeys`; if every entry is
/// still draining, the longest idle are dropped.
///
/// ```swift
/// let limiter = RateLimiter(perMinute: 60)
/// if let wait = limiter.take("pk_hash|203.0.113.9") { /* 429, Retry-After: wait */ }
/// ```
final class RateLimiter: Sendable {
    let perMinute: Int
    let burst: Int
    let maximumKeys: Int
    /// Time since some fixed start; a test passes its own.
    private let clock: @Sendable () -> Duration

    private struct Bucket {
        var tokens: Double
        var updated: Duration
    }
    private let buckets = Mutex<[String: Bucket]>([:])

    /// - Parameters:
    ///   - perMinute: the sustained rate (more than 0).
    ///   - burst: how many may be taken at once; a third of a minute's worth when nil.
    init(perMinute: Int, burst: Int? = nil, maximumKeys: Int = 100_000, clock: (@Sendable () -> Duration)? = nil) {
        precondition(perMinute > 0, "a rate limit of 0 means no limiter")
        self.perMinute = perMinute
        self.burst = max(1, burst ?? perMinute / 3)
        self.maximumKeys = max(1, maximumKeys)
        if let clock {
            self.clock = clock
        } else {
            let start = ContinuousClock.now
            self.clock = { ContinuousClock.now - start }
        }
    }

    /// Takes one from `key`'s bucket.
    ///
    /// - Returns: nil when taken; otherwise the whole seconds until one is there (at least 1).
    func take(_ key: String) -> Int? {
        let now = clock()
        let perSecond = Double(perMinute) / 60
        let capacity = Double(burst)
        return buckets.withLock { buckets -> Int? in
            var bucket = buckets[key] ?? Bucket(tokens: capacity, updated: now)
            bucket.tokens = min(capacity, bucket.tokens + max(0, (now - bucket.updated).seconds) * perSecond)
            bucket.updated = now
            defer {
                buckets[key] = bucket
                if buckets.count > maximumKeys { Self.prune(&buckets, now: now, perSecond: perSecond, capacity: capacity, keep: maximumKeys) }
            }
            guard bucket.tokens >= 1 else {
                return max(1, Int(((1 - bucket.tokens) / perSecond).rounded(.up)))
            }
            bucket.tokens -= 1
            return nil
        }
    }

    /// How many keys the table holds (for tests).
    var keyCount: Int { buckets.withLock { $0.count } }

    /// Drops the buckets that have filled up again; then, if still too many, the longest idle
    /// until a tenth of the room is free.
    private static func prune(_ buckets: inout [String: Bucket], now: Duration, perSecond: Double, capacity: Double, keep: Int) {
        buckets = buckets.filter { _, bucket in bucket.tokens + (now - bucket.updated).seconds * perSecond < capacity }
        guard buckets.count > keep else { return }
        let excess = buckets.count - keep * 9 / 10
        for (key, _) in buckets.sorted(by: { $0.value.updated < $1.value.updated }).prefix(excess) {
            buckets[key] = nil
        }
    }
}
