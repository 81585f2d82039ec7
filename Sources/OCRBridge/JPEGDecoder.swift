internal import CLibJPEG

/// Decodes JPEG files into ``Bitmap``s through libjpeg-turbo, with size limits checked
/// from the header before any pixel is decoded.
///
/// Baseline and progressive files, grey and colour (YCbCr or RGB), decode to grey or RGB
/// as PNGs do. CMYK and YCCK files (from print workflows, never from a camera) and 12-bit
/// files are refused with a message that says what to send instead. A file cut short or
/// with damaged data is refused, not decoded into a half-grey picture.
///
/// This decoder returns the pixels as stored; ``ImageDecoder`` also applies the EXIF
/// orientation (``orientation(of:)``).
public struct JPEGDecoder: Sendable {
    /// What a JPEG header says, read without decoding any pixels.
    public struct Header: Sendable, Equatable {
        public var width: Int
        public var height: Int
        /// 1 for grey, 3 for colour.
        public var components: Int
        public var isProgressive: Bool
    }

    public var limits: ImageLimits

    public init(limits: ImageLimits = ImageLimits()) {
        self.limits = limits
    }

    /// Decodes JPEG bytes, as stored (no EXIF orientation applied).
    ///
    /// - Parameter leastLongSide: when given, a picture whose long side is at least twice this
    ///   is decoded at 1/2, 1/4 or 1/8 of its size, the smallest that keeps the long side at
    ///   least this (libjpeg-turbo's DCT scaling: it decodes fewer coefficients, several times
    ///   faster than decoding whole and shrinking). The limits apply to the stored size.
    /// - Throws: ``OCRError`` with code `image_unreadable` or `image_too_large`.
    public func decode(_ bytes: [UInt8], leastLongSide: Int? = nil) throws(OCRError) -> Bitmap {
        guard !bytes.isEmpty else {
            throw OCRError(.imageUnreadable, "the image file is empty; supply a JPEG or PNG picture of the card")
        }
        if let error = limits.byteError(bytes.count) { throw error }
        return try bytes.withUnsafeBufferPointer { (buffer) throws(OCRError) -> Bitmap in
            let (decoder, header) = try Self.begin(buffer)
            if let error = limits.sizeError(width: Int(header.width), height: Int(header.height)) {
                cljpeg_end(decoder)
                throw error
            }
            let reduction = leastLongSide.map { Self.reduction(longSide: Int(max(header.width, header.height)), leastLongSide: $0) } ?? 1
            let width = Int(cljpeg_scaled_side(header.width, Int32(reduction)))
            let height = Int(cljpeg_scaled_side(header.height, Int32(reduction)))
            let format: Bitmap.Format = header.components == 1 ? .grey8 : .rgb8
            let stride = width * format.channels
            var pixels = [UInt8](repeating: 0, count: stride * height)
            var message = [CChar](repeating: 0, count: 256)
            let finish = pixels.withUnsafeMutableBufferPointer { target in
                // cljpeg_finish consumes the decoder whatever happens.
                cljpeg_finish(decoder, Int32(reduction), target.baseAddress, stride, Int32(format.channels), &message, message.count)
            }
            guard finish == CLJPEG_OK else {
                throw Self.error(for: finish, message: message, stage: "image data")
            }
            return Bitmap(width: width, height: height, format: format, pixels: pixels)
        }
    }

    /// The divisor (1, 2, 4 or 8) a picture with this long side is decoded at so that its long
    /// side stays at least `leastLongSide`: the largest that does.
    public static func reduction(longSide: Int, leastLongSide: Int) -> Int {
        [8, 4, 2].first { (longSide + $0 - 1) / $0 >= max(1, leastLongSide) } ?? 1
    }

    /// Reads only the header of a JPEG: its size, components and whether it is progressive.
    public func header(of bytes: [UInt8]) throws(OCRError) -> Header {
        try bytes.withUnsafeBufferPointer { (buffer) throws(OCRError) -> Header in
            let (decoder, header) = try Self.begin(buffer)
            cljpeg_end(decoder)
            return Header(
                width: Int(header.width),
                height: Int(header.height),
                components: Int(header.components),
                isProgressive: header.progressive != 0
            )
        }
    }

    /// Opens a decoder on the bytes and reads the markers up to the first scan; the caller
    /// must pass the decoder to `cljpeg_finish` or `cljpeg_end` while `buffer` is alive.
    private static func begin(_ buffer: UnsafeBufferPointer<UInt8>) throws(OCRError) -> (OpaquePointer, cljpeg_header) {
        var message = [CChar](repeating: 0, count: 256)
        var header = cljpeg_header()
        var decoder: OpaquePointer?
        let status = cljpeg_begin(buffer.baseAddress, buffer.count, &decoder, &header, &message, message.count)
        guard status == CLJPEG_OK, let decoder else {
            throw error(for: status, message: message, stage: "header")
        }
        return (decoder, header)
    }

    private static func error(for status: cljpeg_status, message: [CChar], stage: String) -> OCRError {
        let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        switch status {
        case CLJPEG_OUT_OF_MEMORY:
            return OCRError(.outOfMemory, "not enough memory to decode the image (\(reason))")
        case CLJPEG_UNSUPPORTED:
            return OCRError(.imageUnreadable, "the JPEG cannot be scanned: \(reason)")
        default:
            return OCRError(.imageUnreadable, "the file is not a readable JPEG image: \(reason) (in the \(stage))")
        }
    }
}

extension JPEGDecoder {
    /// The EXIF orientation (1 to 8) a JPEG's APP1 segment records, or nil when there is
    /// none or it cannot be read. Only the markers before the first scan are looked at, and
    /// every offset is checked against the data: a damaged EXIF block means "no orientation",
    /// never a failure to scan.
    ///
    /// The value says how the stored pixels must be turned to be seen upright: 6 is a phone
    /// held upright (pixels stored on their side, turned 90° clockwise to show).
    public static func orientation(of bytes: [UInt8]) -> Int? {
        guard bytes.starts(with: [0xFF, 0xD8]) else { return nil }
        var index = 2
        while index + 4 <= bytes.count {
            guard bytes[index] == 0xFF else { return nil }
            let marker = bytes[index + 1]
            if marker == 0xFF {  // fill byte before a marker
                index += 1
                continue
            }
            // Markers without a length: TEM and the restart markers.
            if marker == 0x01 || (0xD0...0xD7).contains(marker) {
                index += 2
                continue
            }
            // Start of scan or end of image: no more metadata before the pixels.
            if marker == 0xDA || marker == 0xD9 { return nil }
            let length = Int(bytes[index + 2]) << 8 | Int(bytes[index + 3])
            let start = index + 4
            let end = index + 2 + length
            guard length >= 2, end <= bytes.count else { return nil }
            if marker == 0xE1, let value = exifOrientation(bytes[start..<end]) { return value }
            index = end
        }
        return nil
    }

    /// The orientation tag (0x0112) of IFD0 in an APP1 segment that starts "Exif\0\0".
    static func exifOrientation(_ segment: ArraySlice<UInt8>) -> Int? {
        guard segment.starts(with: [0x45, 0x78, 0x69, 0x66, 0x00, 0x00]) else { return nil }
        let tiff = Array(segment.dropFirst(6))
        guard tiff.count >= 8 else { return nil }
        let bigEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x4D, 0x4D): bigEndian = true
        case (0x49, 0x49): bigEndian = false
        default: return nil
        }
        func read16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return bigEndian ? Int(tiff[at]) << 8 | Int(tiff[at + 1]) : Int(tiff[at + 1]) << 8 | Int(tiff[at])
        }
        func read32(_ at: Int) -> Int? {
            guard let high = read16(bigEndian ? at : at + 2), let low = read16(bigEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard read16(2) == 42, let ifd = read32(4), let count = read16(ifd) else { return nil }
        for entry in 0..<count {
            let at = ifd + 2 + entry * 12
            guard let tag = read16(at) else { return nil }
            guard tag == 0x0112 else { continue }
            // SHORT, one value, stored in the first two bytes of the value field.
            guard read16(at + 2) == 3, read32(at + 4) == 1, let value = read16(at + 8), (1...8).contains(value) else {
                return nil
            }
            return value
        }
        return nil
    }

    /// An APP1 payload ("Exif\0\0" and a little-endian TIFF header with one IFD0 entry)
    /// that records `orientation`: what a phone writes, for tests and for re-encoding.
    public static func exifBlock(orientation: Int) -> [UInt8] {
        precondition((1...8).contains(orientation), "EXIF orientation is 1 to 8")
        var block: [UInt8] = Array("Exif".utf8) + [0, 0]
        block += [0x49, 0x49, 42, 0, 8, 0, 0, 0]  // "II", 42, IFD0 at offset 8
        block += [1, 0]  // one entry
        block += [0x12, 0x01, 3, 0, 1, 0, 0, 0, UInt8(orientation), 0, 0, 0]  // orientation, SHORT, 1
        block += [0, 0, 0, 0]  // no next IFD
        return block
    }
}

/// Encodes ``Bitmap``s as JPEG bytes through libjpeg-turbo: test pictures as a phone would
/// save them (a quality, progressive or not, an EXIF orientation).
public enum JPEGEncoder {
    /// Encodes a bitmap as an 8-bit grey or YCbCr JPEG.
    ///
    /// - Parameters:
    ///   - quality: 1 to 100 (phones save at about 85 to 95).
    ///   - progressive: several scans instead of one.
    ///   - orientation: an EXIF orientation (1 to 8) to record, or nil for no EXIF block.
    public static func encode(
        _ bitmap: Bitmap,
        quality: Int = 90,
        progressive: Bool = false,
        orientation: Int? = nil
    ) throws(OCRError) -> [UInt8] {
        var message = [CChar](repeating: 0, count: 256)
        var output: UnsafeMutablePointer<UInt8>?
        var size = 0
        let exif = orientation.map(JPEGDecoder.exifBlock(orientation:))
        let status = bitmap.pixels.withUnsafeBufferPointer { pixels in
            withOptionalBuffer(exif) { app1 in
                cljpeg_encode(
                    pixels.baseAddress,
                    UInt32(bitmap.width),
                    UInt32(bitmap.height),
                    bitmap.bytesPerRow,
                    Int32(bitmap.format.channels),
                    Int32(quality),
                    progressive ? 1 : 0,
                    app1?.baseAddress,
                    app1?.count ?? 0,
                    &output,
                    &size,
                    &message,
                    message.count
                )
            }
        }
        guard status == CLJPEG_OK, let output else {
            let reason = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            throw OCRError(status == CLJPEG_OUT_OF_MEMORY ? .outOfMemory : .imageUnreadable, "cannot encode JPEG: \(reason)")
        }
        defer { cljpeg_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: size))
    }

    private static func withOptionalBuffer<R>(_ bytes: [UInt8]?, _ body: (UnsafeBufferPointer<UInt8>?) -> R) -> R {
        guard let bytes else { return body(nil) }
        return bytes.withUnsafeBufferPointer { body($0) }
    }
}

extension Bitmap {
    /// The picture as it is meant to be seen, for a stored picture with EXIF orientation
    /// `value` (1 to 8; anything else is taken as 1): mirrored and turned exactly, never
    /// resampled.
    public func oriented(exif value: Int) -> Bitmap {
        switch value {
        case 2: return mirrored()
        case 3: return turned(quarterTurns: 2)
        case 4: return mirrored().turned(quarterTurns: 2)
        case 5: return mirrored().turned(quarterTurns: 3)
        case 6: return turned(quarterTurns: 1)
        case 7: return mirrored().turned(quarterTurns: 1)
        case 8: return turned(quarterTurns: 3)
        default: return self
        }
    }

    /// The picture mirrored left to right.
    public func mirrored() -> Bitmap {
        let channels = format.channels
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<height {
            let row = y * width * channels
            for x in 0..<width {
                let source = row + x * channels
                let target = row + (width - 1 - x) * channels
                for channel in 0..<channels { out[target + channel] = pixels[source + channel] }
            }
        }
        return Bitmap(width: width, height: height, format: format, pixels: out)
    }
}
