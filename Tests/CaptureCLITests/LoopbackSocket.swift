import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A TCP socket on 127.0.0.1 at a port the system picks, for tests that need a port taken
/// or one that was free a moment ago. The caller closes `descriptor`.
struct LoopbackSocket {
    let descriptor: Int32
    let port: Int

    /// Binds a new socket, and listens on it when `listening`.
    init(listening: Bool) throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(descriptor >= 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(descriptor, raw, length) == 0 && (!listening || listen(descriptor, 1) == 0) && getsockname(descriptor, raw, &length) == 0
            }
        }
        if !bound { close(descriptor) }
        try #require(bound, "could not bind a loopback socket")
        self.descriptor = descriptor
        self.port = Int(UInt16(bigEndian: address.sin_port))
    }
}
