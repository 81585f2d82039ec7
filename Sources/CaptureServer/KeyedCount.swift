/// How many of something each key holds (uploads per client address, scanner places per
/// merchant, connections per address), and all keys together. A key holding none is not kept.
struct KeyedCount: Sendable {
    private(set) var total = 0
    private var counts: [String: Int] = [:]

    subscript(key: String) -> Int { counts[key, default: 0] }

    mutating func add(_ key: String) {
        counts[key, default: 0] += 1
        total += 1
    }

    mutating func remove(_ key: String) {
        let left = counts[key, default: 1] - 1
        counts[key] = left > 0 ? left : nil
        total -= 1
    }
}
