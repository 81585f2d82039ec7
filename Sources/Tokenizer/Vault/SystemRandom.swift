#if canImport(Glibc)
import Glibc
#endif

/// Random bytes from the kernel's cryptographic generator, in one system call for the whole
/// buffer (the C library's `arc4random_buf`, which asks `getrandom`). The standard library's
/// generator asks once for every 8 bytes: ids and AES-GCM nonces made that six system calls of
/// every token request.
enum SystemRandom {
    static func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress else { return }
        arc4random_buf(base, buffer.count)
    }

    static func bytes(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
            fill(UnsafeMutableRawBufferPointer(buffer))
            initialized = count
        }
    }
}
