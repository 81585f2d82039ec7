import Dispatch
import Foundation
import Tokenizer

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Where webhooks may be sent: by default only to public addresses, so that an endpoint URL
/// cannot make the server post to itself, its network or a cloud's metadata service (and
/// report what answered). The address is checked as resolved, in whatever spelling the URL
/// gives it, when the endpoint is made and again at every delivery, and a delivery connects to
/// the very address it checked: a name that answers with another address later (DNS
/// rebinding) gains nothing.
public struct WebhookAddressPolicy: Sendable {
    /// Whether loopback, private and other non-public addresses are allowed
    /// (`serve --webhook-allow-private`: local development and tests).
    public var allowPrivate: Bool
    /// A host name's addresses (4 or 16 bytes each); empty when it does not resolve.
    public var resolve: @Sendable (String) async -> [[UInt8]]
    /// Which addresses may be sent to when private ones are not allowed: ``isPublic(_:)``
    /// (a test may count its loopback receiver in).
    public var isAllowed: @Sendable ([UInt8]) -> Bool

    public init(
        allowPrivate: Bool = false,
        resolve: @escaping @Sendable (String) async -> [[UInt8]] = WebhookAddressPolicy.systemResolve,
        isAllowed: @escaping @Sendable ([UInt8]) -> Bool = WebhookAddressPolicy.isPublic
    ) {
        self.allowPrivate = allowPrivate
        self.resolve = resolve
        self.isAllowed = isAllowed
    }

    /// Where one delivery goes.
    public enum Destination: Sendable, Equatable {
        /// The URL as it is: private addresses are allowed, or its host is a public IP address.
        case asWritten
        /// The host name, connected to at this address (checked public), as text.
        case pinned(String)
        /// Not sent: the host does not resolve.
        case unresolved
        /// Not sent: the address is not public.
        case refused
    }

    /// What a policy refusal says, and all it says: not the address, which would tell the
    /// merchant how the server's own network resolves names.
    public static let refusal =
        "refused by policy: the endpoint's address is not public (loopback, private, link-local or reserved); webhooks go to public addresses only"

    /// The check when an endpoint is made: an address that is not public is refused; a name
    /// that does not resolve yet is taken (each delivery checks it again).
    func checkNew(_ address: WebAddress, param: String) async throws(VaultError) {
        if await destination(of: address) == .refused {
            throw VaultError(
                .invalidAddress,
                "\(param)'s host is not a public address (loopback, private, link-local or reserved): webhooks go to public addresses only; for local development, start the server with --webhook-allow-private",
                param: param
            )
        }
    }

    /// Where a delivery to `address` goes now.
    public func destination(of address: WebAddress) async -> Destination {
        if allowPrivate { return .asWritten }
        switch address.host {
        case .ipv4(let bytes), .ipv6(let bytes):
            return isAllowed(bytes) ? .asWritten : .refused
        case .domain(let name):
            let addresses = await resolve(name)
            guard let first = addresses.first else { return .unresolved }
            // Every address the name has: a name that mixes a public address with a private
            // one would reach the private one on some connections.
            guard addresses.allSatisfy(isAllowed) else { return .refused }
            return .pinned(Self.text(first))
        }
    }

    /// An address as text for a connection: dotted IPv4, or IPv6 without brackets.
    static func text(_ bytes: [UInt8]) -> String {
        bytes.count == 4 ? bytes.map(String.init).joined(separator: ".") : WebAddress.ipv6Text(bytes)
    }

    /// Whether an address (4 or 16 bytes) is one on the public internet: not loopback,
    /// private, shared (carrier NAT), link-local (cloud metadata services among them),
    /// unspecified, multicast, documentation, benchmarking or reserved. An IPv6 address that
    /// carries an IPv4 one (mapped, NAT64, 6to4) is judged by the IPv4 address.
    public static func isPublic(_ bytes: [UInt8]) -> Bool {
        if bytes.count == 4 { return isPublicIPv4(bytes) }
        guard bytes.count == 16 else { return false }
        let head = { (count: Int) in Array(bytes.prefix(count)) }
        // ::/96 (unspecified, loopback, compatible) and ::ffff:0:0/96 (mapped).
        if head(10).allSatisfy({ $0 == 0 }) {
            if bytes[10] == 0xFF && bytes[11] == 0xFF { return isPublicIPv4(Array(bytes[12...])) }
            // Unspecified, loopback, and the deprecated IPv4-compatible form.
            return false
        }
        // 64:ff9b::/96, NAT64's well-known prefix, and 64:ff9b:1::/48, a local one.
        if head(12) == [0, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0] { return isPublicIPv4(Array(bytes[12...])) }
        if head(6) == [0, 0x64, 0xFF, 0x9B, 0, 1] { return false }
        // 6to4: the IPv4 address in bytes 2 to 5.
        if head(2) == [0x20, 0x02] { return isPublicIPv4(Array(bytes[2..<6])) }
        let first = bytes[0]
        let second = bytes[1]
        // fc00::/7 unique local, fe80::/10 link-local, fec0::/10 site-local, ff00::/8 multicast.
        if first & 0xFE == 0xFC || first == 0xFF || (first == 0xFE && second & 0x80 == 0x80) { return false }
        // 100::/64 discard; 2001::/23 protocol assignments (Teredo among them); 2001:db8::/32
        // and 3fff::/20 documentation; 5f00::/16 segment routing.
        if head(8) == [1, 0, 0, 0, 0, 0, 0, 0] { return false }
        if first == 0x20 && second == 0x01 && bytes[2] & 0xFE == 0 { return false }
        if head(4) == [0x20, 0x01, 0x0D, 0xB8] { return false }
        if first == 0x3F && second & 0xF0 == 0xF0 { return false }
        if first == 0x5F && second == 0 { return false }
        // Global unicast is 2000::/3; the rest is unassigned.
        return first & 0xE0 == 0x20
    }

    static func isPublicIPv4(_ bytes: [UInt8]) -> Bool {
        guard bytes.count == 4 else { return false }
        let (a, b, c) = (bytes[0], bytes[1], bytes[2])
        switch a {
        case 0, 10, 127: return false  // this network, private, loopback
        case 100 where b & 0xC0 == 64: return false  // 100.64/10 shared (carrier NAT; metadata on some clouds)
        case 169 where b == 254: return false  // link-local (169.254.169.254 metadata)
        case 172 where b & 0xF0 == 16: return false  // 172.16/12 private
        case 192 where b == 0 && (c == 0 || c == 2): return false  // protocol assignments, TEST-NET-1
        case 192 where b == 88 && c == 99: return false  // 6to4 relay anycast
        case 192 where b == 168: return false  // private
        case 198 where b & 0xFE == 18: return false  // benchmarking
        case 198 where b == 51 && c == 100: return false  // TEST-NET-2
        case 203 where b == 0 && c == 113: return false  // TEST-NET-3
        case 224...: return false  // multicast, reserved, broadcast
        default: return true
        }
    }

    /// The system's resolver (getaddrinfo), off the caller's thread: it blocks.
    public static let systemResolve: @Sendable (String) async -> [[UInt8]] = { name in
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: lookUp(name)) }
        }
    }

    static func lookUp(_ name: String) -> [[UInt8]] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(name, nil, &hints, &list) == 0, let list else { return [] }
        defer { freeaddrinfo(list) }
        var addresses: [[UInt8]] = []
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let current = entry {
            if let socket = current.pointee.ai_addr {
                switch Int32(socket.pointee.sa_family) {
                case AF_INET:
                    socket.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { address in
                        var raw = address.pointee.sin_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                case AF_INET6:
                    socket.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
                        var raw = address.pointee.sin6_addr
                        addresses.append(withUnsafeBytes(of: &raw) { Array($0) })
                    }
                default:
                    break
                }
            }
            entry = current.pointee.ai_next
        }
        var seen = Set<[UInt8]>()
        return addresses.filter { seen.insert($0).inserted }
    }
}
