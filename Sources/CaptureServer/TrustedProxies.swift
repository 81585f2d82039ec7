import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The reverse proxies whose `X-Forwarded-For` is believed (`serve --trusted-proxy`), so that
/// behind a load balancer each buyer is counted by their own address, not the proxy's.
///
/// A client can write anything into `X-Forwarded-For`; only what a trusted proxy appended can
/// be believed. So the client is found from the right: the connected peer, then each address
/// the header lists, as long as the one looked at is a trusted proxy; the first that is not is
/// the client. With no trusted proxies (the default) the header is ignored.
public struct TrustedProxies: Sendable, Equatable {
    /// An address block: the first `bits` bits of `address` (4 bytes, or 16 for IPv6).
    struct Block: Sendable, Equatable {
        let address: [UInt8]
        let bits: Int

        func contains(_ other: [UInt8]) -> Bool {
            guard other.count == address.count else { return false }
            var left = bits
            for (mine, theirs) in zip(address, other) where left > 0 {
                let mask: UInt8 = left >= 8 ? 0xFF : ~(0xFF >> UInt8(left))
                if mine & mask != theirs & mask { return false }
                left -= 8
            }
            return true
        }
    }

    let blocks: [Block]

    /// Nobody's header is believed.
    public init() {
        blocks = []
    }

    /// Addresses (`10.0.0.7`, `::1`) or blocks (`10.0.0.0/8`, `2001:db8::/32`).
    ///
    /// - Throws: ``Invalid`` naming the first entry that is neither.
    public init(_ entries: [String]) throws(Invalid) {
        blocks = try entries.map { entry throws(Invalid) in
            let parts = entry.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            guard let address = Self.bytes(of: String(parts[0])) else { throw Invalid(entry: entry) }
            let limit = address.count * 8
            guard parts.count == 2 else { return Block(address: address, bits: limit) }
            guard let bits = Int(parts[1]), (0...limit).contains(bits), parts[1].allSatisfy(\.isASCII) else {
                throw Invalid(entry: entry)
            }
            return Block(address: address, bits: bits)
        }
    }

    public var isEmpty: Bool { blocks.isEmpty }

    func trusts(_ address: String) -> Bool {
        guard !blocks.isEmpty, let bytes = Self.bytes(of: address) else { return false }
        return blocks.contains { $0.contains(bytes) }
    }

    /// What a request is counted by for rate limits: its client's address (``client(peer:forwardedFor:)``),
    /// and for IPv6 the client's /64, the block one subscriber is given (a client must not get
    /// a fresh allowance by moving to the next address of its own block).
    func rateKey(peer: String, forwardedFor values: [String]) -> String {
        let client = client(peer: peer, forwardedFor: values)
        guard let bytes = Self.bytes(of: client), bytes.count == 16 else { return client }
        return Self.text(of: Array(bytes[..<8]) + Array(repeating: 0, count: 8)) + "/64"
    }

    /// The client's address, written one way (`2001:db8::1`, however it was sent): `peer`
    /// itself, unless it is a trusted proxy; then the first address from the right of the
    /// `X-Forwarded-For` values that is not one. An entry that is not an address stops the walk
    /// at the last trusted hop: only a client writes such a thing, and a made-up string must
    /// not buy a fresh allowance.
    func client(peer: String, forwardedFor values: [String]) -> String {
        guard trusts(peer) else { return Self.canonical(peer) }
        let hops = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        var nearest = peer
        for hop in hops.reversed() {
            guard Self.bytes(of: hop) != nil else { break }
            guard trusts(hop) else { return Self.canonical(hop) }
            nearest = hop
        }
        // Every hop a trusted proxy, or the rest not addresses: the farthest trusted hop is as
        // near the client as can be known.
        return Self.canonical(nearest)
    }

    static func canonical(_ address: String) -> String {
        bytes(of: address).map(text(of:)) ?? address
    }

    static func text(of bytes: [UInt8]) -> String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = bytes.count == 4 ? AF_INET : AF_INET6
        let written = bytes.withUnsafeBytes { inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count)) }
        guard written != nil else { return "unknown" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The address's bytes (4 or 16), or nil when it is not an IPv4 or IPv6 address. An IPv4
    /// address mapped into IPv6 (`::ffff:10.0.0.7`, as a dual-stack socket shows its peer) is
    /// the IPv4 address.
    static func bytes(of text: String) -> [UInt8]? {
        var v4 = [UInt8](repeating: 0, count: 4)
        if v4.withUnsafeMutableBytes({ inet_pton(AF_INET, text, $0.baseAddress) }) == 1 { return v4 }
        var bytes = [UInt8](repeating: 0, count: 16)
        guard bytes.withUnsafeMutableBytes({ inet_pton(AF_INET6, text, $0.baseAddress) }) == 1 else { return nil }
        let mappedPrefix: [UInt8] = Array(repeating: 0, count: 10) + [0xFF, 0xFF]
        return bytes.starts(with: mappedPrefix) ? Array(bytes[12...]) : bytes
    }

    /// An entry of `--trusted-proxy` that is not an address or a block.
    public struct Invalid: Error, CustomStringConvertible {
        public let entry: String
        public var description: String {
            "'\(entry.prefix(60))' is not an IP address or block; give one like 10.0.0.7, 10.0.0.0/8 or 2001:db8::/32"
        }
    }
}
