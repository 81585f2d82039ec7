public import CardCapture
import HTTPTypes
import Synchronization

/// The server's scanner as it loads: `serve` listens at once and loads the models beside
/// (a killed server took 3 to 7 s to listen again, refusing every request meanwhile, while
/// only scans need the models). Until it is ready scans are 503 `scanner_loading` and
/// `/readyz` says `starting`; a scanner that cannot load leaves scans off (503
/// `scanner_unavailable`) and the rest served.
public final class ScannerSlot: Sendable {
    enum State: Sendable {
        case loading
        case ready(CardScanner)
        case off
    }

    private let state = Mutex(State.loading)

    public init() {}

    init(ready scanner: CardScanner) {
        state.withLock { $0 = .ready(scanner) }
    }

    /// The scanner is loaded.
    public func ready(_ scanner: CardScanner) {
        state.withLock { $0 = .ready(scanner) }
    }

    /// The scanner could not load (the server logs why): scans stay off.
    public func off() {
        state.withLock { $0 = .off }
    }

    /// Whether loading has ended, either way.
    public var isSettled: Bool {
        state.withLock { state in
            if case .loading = state { return false }
            return true
        }
    }

    /// The scanner, or the 503 that says why there is none yet (or at all).
    func scanner() throws(APIError) -> CardScanner {
        switch state.withLock({ $0 }) {
        case .ready(let scanner):
            return scanner
        case .loading:
            var error = APIError(
                .serviceUnavailable,
                .api,
                code: "scanner_loading",
                message: "the server has just started and is loading the scanner's models; retry in a few seconds, or type the card in"
            )
            error.retryAfter = 2
            throw error
        case .off:
            throw APIError(
                .serviceUnavailable,
                .api,
                code: "scanner_unavailable",
                message: "this server has no scanner (Tesseract or its English data is missing); install tesseract-ocr-eng and restart it"
            )
        }
    }
}
