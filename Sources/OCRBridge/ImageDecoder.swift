#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Bounds on what the image decoders accept. The defaults fit a 12-megapixel phone photo
/// (4032 × 3024) with room to spare, and cap memory at about 50 MB an image.
public struct ImageLimits: Sendable, Equatable {
    /// Largest file, in bytes.
    public var maxBytes: Int
    /// Widest image, in pixels.
    public var maxWidth: Int
    /// Tallest image, in pixels.
    public var maxHeight: Int
    /// Most pixels (width × height).
    public var maxPixels: Int

    public init(
        maxBytes: Int = 40 * 1024 * 1024,
        maxWidth: Int = 8192,
        maxHeight: Int = 8192,
        maxPixels: Int = 16_000_000
    ) {
        self.maxBytes = maxBytes
        self.maxWidth = maxWidth
        self.maxHeight = maxHeight
        self.maxPixels = maxPixels
    }

    /// The error for a picture whose header declares more than these limits, or nil. Checked
    /// before any pixel buffer is allocated, so a small file declaring a huge picture (a
    /// decompression bomb) costs nothing.
    func sizeError(width: Int, height: Int) -> OCRError? {
        guard width <= maxWidth, height <= maxHeight else {
            return OCRError(
                .imageTooLarge,
                "the image is \(width) × \(height) pixels; the limit is \(maxWidth) × \(maxHeight)"
            )
        }
        guard width * height <= maxPixels else {
            return OCRError(
                .imageTooLarge,
                "the image has \(width * height) pixels; the limit is \(maxPixels); scale it down first"
            )
        }
        return nil
    }

    /// The error for a file of `count` bytes, or nil.
    func byteError(_ count: Int) -> OCRError? {
        guard count <= maxBytes else {
            return OCRError(.imageTooLarge, "the image file is \(count) bytes; the limit is \(maxBytes)")
        }
        return nil
    }
}

/// Decodes a PNG or a JPEG, told apart by their first bytes (never by a file's name or a
/// request's declared type), into an upright ``Bitmap``: a JPEG's EXIF orientation, as a
/// phone writes it for a picture taken in portrait, is applied.
///
/// ```swift
/// let bitmap = try ImageDecoder().decode(contentsOf: "IMG_0412.jpg")
/// ```
public struct ImageDecoder: Sendable {
    /// The formats the decoder reads.
    public enum Format: String, Sendable {
        case png
        case jpeg

        /// The format the bytes start like, or nil.
        public init?(sniffing bytes: some Collection<UInt8>) {
            if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) {
                self = .png
            } else if bytes.starts(with: [0xFF, 0xD8, 0xFF]) {
                self = .jpeg
            } else {
                return nil
            }
        }
    }

    public var limits: ImageLimits
    /// A JPEG at least twice this on its long side is decoded smaller, its long side kept at
    /// least this (``JPEGDecoder/decode(_:leastLongSide:)``); nil decodes every picture whole.
    /// PNGs are always decoded whole.
    public var leastLongSide: Int?

    public init(limits: ImageLimits = ImageLimits(), leastLongSide: Int? = nil) {
        self.limits = limits
        self.leastLongSide = leastLongSide
    }

    /// Reads and decodes an image file, refusing a file larger than ``ImageLimits/maxBytes``
    /// without reading all of it.
    ///
    /// - Throws: ``OCRError`` with code `image_unreadable` (missing, empty, corrupt, or
    ///   neither PNG nor JPEG) or `image_too_large`.
    public func decode(contentsOf path: String) throws(OCRError) -> Bitmap {
        try decode(Self.readFile(path, maxBytes: limits.maxBytes))
    }

    /// Decodes PNG or JPEG bytes.
    ///
    /// - Throws: ``OCRError`` with code `image_unreadable` or `image_too_large`.
    public func decode(_ bytes: [UInt8]) throws(OCRError) -> Bitmap {
        let started = ContinuousClock.now
        defer { StageTimings.add(.decode, since: started) }
        guard !bytes.isEmpty else {
            throw OCRError(.imageUnreadable, "the image file is empty; supply a PNG or JPEG picture of the card")
        }
        if let error = limits.byteError(bytes.count) { throw error }
        switch Format(sniffing: bytes) {
        case .png:
            return try PNGDecoder(limits: limits).decode(bytes)
        case .jpeg:
            let bitmap = try JPEGDecoder(limits: limits).decode(bytes, leastLongSide: leastLongSide)
            return bitmap.oriented(exif: JPEGDecoder.orientation(of: bytes) ?? 1)
        case nil:
            throw OCRError(
                .imageUnreadable,
                "the file is neither a PNG nor a JPEG image (\(Self.describeStart(of: bytes))); supply a PNG or JPEG picture of the card"
            )
        }
    }

    /// What a file that is not an image starts with, said without echoing its bytes (which
    /// could be anything, a card number included).
    static func describeStart(of bytes: [UInt8]) -> String {
        let head = bytes.prefix(64)
        if head.starts(with: Array("GIF8".utf8)) { return "it is a GIF" }
        if head.starts(with: Array("RIFF".utf8)) { return "it looks like WebP" }
        if head.count >= 12, Array(head[head.startIndex + 4..<head.startIndex + 12]) == Array("ftypheic".utf8) {
            return "it is HEIC, as an iPhone saves by default; choose JPEG in its camera settings"
        }
        if head.allSatisfy({ $0 == 0x09 || $0 == 0x0A || $0 == 0x0D || (0x20..<0x7F).contains($0) }) {
            return "it is text"
        }
        return "its first bytes match no image format"
    }

    static func readFile(_ path: String, maxBytes: Int) throws(OCRError) -> [UInt8] {
        // Non-blocking: opening a FIFO for reading would otherwise wait for a writer, before
        // the check below could refuse it. A regular file reads the same either way.
        let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            throw OCRError(.imageUnreadable, "cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else {
            throw OCRError(.imageUnreadable, "\(path) is not a regular file")
        }
        // Refuse an oversized file from its size alone, before reading any of it.
        guard Int(status.st_size) <= maxBytes else {
            throw OCRError(.imageTooLarge, "\(path) is \(status.st_size) bytes; the limit for images is \(maxBytes)")
        }
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        var filled = 0
        while filled < bytes.count {
            let count = bytes.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + filled, buffer.count - filled)
            }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else {
                if count == 0 { break }
                throw OCRError(.imageUnreadable, "cannot read \(path): \(String(cString: strerror(errno)))")
            }
            filled += count
        }
        return Array(bytes[0..<filled])
    }
}
