internal import CLibPNG

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
    /// Bounds on what the decoder accepts (the same for every format).
    public typealias Limits = ImageLimits

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
        try decode(ImageDecoder.readFile(path, maxBytes: limits.maxBytes))
    }

    /// Decodes PNG bytes.
    ///
    /// - Parameter bytes: the whole file.
    /// - Throws: ``OCRError`` with code `image_unreadable` or `image_too_large`.
    public func decode(_ bytes: [UInt8]) throws(OCRError) -> Bitmap {
        guard !bytes.isEmpty else {
            throw OCRError(.imageUnreadable, "the image file is empty; supply a PNG file")
        }
        if let error = limits.byteError(bytes.count) { throw error }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(OCRError) -> Bitmap in
            let (decoder, header) = try Self.begin(buffer)
            var message = [CChar](repeating: 0, count: 256)
            let width = Int(header.width)
            let height = Int(header.height)
            if let error = limits.sizeError(width: width, height: height) {
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

    private static func error(for status: clpng_status, message: [CChar], stage: String) -> OCRError {
        let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch status {
        case CLPNG_OUT_OF_MEMORY:
            return OCRError(.outOfMemory, "not enough memory to decode the image (\(reason))")
        default:
            return OCRError(.imageUnreadable, "the file is not a readable PNG image: \(reason) (in the \(stage))")
        }
    }
}
