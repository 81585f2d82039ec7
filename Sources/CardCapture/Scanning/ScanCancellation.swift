import OCRBridge
import Synchronization

/// A scan's call-off switch, set from another thread (a server's, when the client that sent the
/// picture closes its connection) and read by the scan between its looks
/// (``CardScanner/scan(imageData:limits:cancellation:)``).
public final class ScanCancellation: Sendable {
    private let cancelled = Atomic<Bool>(false)

    public init() {}

    /// Calls the scan off: it starts no further look and throws ``OCRError`` `cancelled`.
    public func cancel() {
        cancelled.store(true, ordering: .releasing)
    }

    public var isCancelled: Bool {
        cancelled.load(ordering: .acquiring)
    }

    /// Throws ``OCRError`` `cancelled` once ``cancel()`` has been called.
    func check() throws(OCRError) {
        if isCancelled {
            throw OCRError(.cancelled, "the scan was called off: whoever asked for it no longer waits for the answer")
        }
    }
}
