import Synchronization

/// A pool of ``TesseractEngine``s: one per concurrent caller, reused across images.
///
/// Engines are created on demand, so the pool never blocks; at most
/// ``maximumIdle`` are kept between uses.
///
/// ```swift
/// let pool = try TesseractPool()
/// let text = try pool.withEngine { try $0.recognize(bitmap, mode: .singleLine).text }
/// ```
public final class TesseractPool: Sendable {
    private let configuration: TesseractEngine.Configuration
    private let idle: Mutex<[TesseractEngine]>
    /// How many unused engines the pool keeps.
    public let maximumIdle: Int

    /// Creates a pool and one engine, so a missing install fails here rather than on the first image.
    public init(configuration: TesseractEngine.Configuration = .init(), maximumIdle: Int = 8) throws(OCRError) {
        self.configuration = configuration
        self.maximumIdle = max(1, maximumIdle)
        let first = try TesseractEngine(configuration: configuration)
        self.idle = Mutex([first])
    }

    /// Lends an engine to `body` for its duration; the engine must not escape it.
    ///
    /// - Throws: ``OCRError`` when a new engine cannot be created, or whatever `body` throws.
    public func withEngine<Result>(_ body: (TesseractEngine) throws -> Result) throws -> Result {
        let reused = idle.withLock { $0.popLast() }
        let engine: TesseractEngine
        if let reused {
            engine = reused
        } else {
            engine = try TesseractEngine(configuration: configuration)
        }
        defer {
            idle.withLock { engines in
                if engines.count < maximumIdle { engines.append(engine) }
            }
        }
        return try body(engine)
    }

    /// How many engines are waiting to be lent.
    public var idleCount: Int { idle.withLock { $0.count } }
}
