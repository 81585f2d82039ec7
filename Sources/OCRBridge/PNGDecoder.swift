internal import CLibPNG

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Decodes PNG files into ``Bitmap``s through libpng, with size limits checked before
/// any large allocation.
///
/// Every PNG colour type and bit depth is accepted (grey, grey+alpha, RGB, RGBA,
/// palette; 1 to 16 bits; interlaced or not). Colour images decode to RGB, grey ones
/// to grey; transparency is composited over white.
///
/// ```swift
/// let decoder = PNGDecoder(limits: .init(maxPixels: 4_000_000))
/// let bitmap = try decoder.decode(contentsOf: "Fixtures/cards/flat-visa-01.png")
/// ```
public struct PNGDecoder: Sendable {
    /// Bounds on what the decoder accepts. The defaults fit a 12-megapixel phone photo
    /// (4032 × 3024) with room to spare, and cap memory at about 50 MB an image.
    public struct Limits: Sendable, Equatable {
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
    }

    /// What a PNG header says, read without decoding any pixels.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        public var hasColor: Bool
        public var hasAlpha: Bool
        public var is16Bit: Bool
        public var hasPalette: Bool
    }

    public var limits: Limits

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Reads and decodes a PNG file, refusing a file larger than ``Limits/maxBytes``
    /// without reading all of it.
    ///
    /// - Parameter path: the file's path.
    /// - Throws: ``OCRError`` with code `image_unreadable` (missing, empty, corrupt or
    ///   not a PNG) or `image_too_large`.
    public func decode(contentsOf path: String) throws(OCRError) -> Bitmap {
        try decode(Self.readFile(path, maxBytes: limits.maxBytes))
    }

    /// Decodes PNG bytes.
    ///
    /// - Parameter bytes: the whole file.
    /// - Throws: ``OCRError`` with code `image_unreadable` or `image_too_large`.
    public func decode(_ bytes: [UInt8]) throws(OCRError) -> Bitmap {
        guard !bytes.isEmpty else {
            throw OCRError(.imageUnreadable, "the image file is empty; supply a PNG file")
        }
        guard bytes.count <= limits.maxBytes else {
            throw OCRError(.imageTooLarge, "the image file is \(bytes.count) bytes; the limit is \(limits.maxBytes)")
        }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(OCRError) -> Bitmap in
            let (decoder, header) = try Self.begin(buffer)
            var message = [CChar](repeating: 0, count: 256)
            let width = Int(header.width)
            let height = Int(header.height)
            if let error = sizeError(width: width, height: height) {
                clpng_end(decoder)
                throw error
            }
            let format: Bitmap.Format = header.has_color != 0 ? .rgb8 : .grey8
            let stride = width * format.channels
            var pixels = [UInt8](repeating: 0, count: stride * height)
            let finish = pixels.withUnsafeMutableBufferPointer { target in
                // clpng_finish consumes the decoder whatever happens.
                clpng_finish(decoder, target.baseAddress, stride, Int32(format.channels), &message, message.count)
            }
            guard finish == CLPNG_OK else {
                throw Self.error(for: finish, message: message, stage: "pixel data")
            }
            return Bitmap(width: width, height: height, format: format, pixels: pixels)
        }
    }

    /// Reads only the header of a PNG: its size and colour type.
    public func header(of bytes: [UInt8]) throws(OCRError) -> Header {
        try bytes.withUnsafeBufferPointer { (buffer) throws(OCRError) -> Header in
            let (decoder, header) = try Self.begin(buffer)
            clpng_end(decoder)
            return Header(
                width: Int(header.width),
                height: Int(header.height),
                hasColor: header.has_color != 0,
                hasAlpha: header.has_alpha != 0,
                is16Bit: header.is_16bit != 0,
                hasPalette: header.has_palette != 0
            )
        }
    }

    /// Opens a decoder on the bytes and reads the header; the caller must pass the decoder
    /// to `clpng_finish` or `clpng_end`.
    private static func begin(_ buffer: UnsafeBufferPointer<UInt8>) throws(OCRError) -> (OpaquePointer, clpng_header) {
        var message = [CChar](repeating: 0, count: 256)
        var header = clpng_header()
        var decoder: OpaquePointer?
        let status = clpng_begin(buffer.baseAddress, buffer.count, &decoder, &header, &message, message.count)
        guard status == CLPNG_OK, let decoder else {
            throw error(for: status, message: message, stage: "header")
        }
        return (decoder, header)
    }

    private func sizeError(width: Int, height: Int) -> OCRError? {
        guard width <= limits.maxWidth, height <= limits.maxHeight else {
            return OCRError(
                .imageTooLarge,
                "the image is \(width) × \(height) pixels; the limit is \(limits.maxWidth) × \(limits.maxHeight)"
            )
        }
        guard width * height <= limits.maxPixels else {
            return OCRError(
                .imageTooLarge,
                "the image has \(width * height) pixels; the limit is \(limits.maxPixels); scale it down first"
            )
        }
        return nil
    }

    private static func error(for status: clpng_status, message: [CChar], stage: String) -> OCRError {
        let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch status {
        case CLPNG_OUT_OF_MEMORY:
            return OCRError(.outOfMemory, "not enough memory to decode the image (\(reason))")
        default:
            return OCRError(.imageUnreadable, "the file is not a readable PNG image: \(reason) (in the \(stage))")
        }
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
