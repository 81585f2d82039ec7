#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension Bitmap {
    /// The image as 8-bit grey, using the Rec. 601 luma weights. A grey image returns itself.
    public func grey() -> Bitmap {
        guard format == .rgb8 else { return self }
        var out = [UInt8](repeating: 0, count: width * height)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for index in 0..<(width * height) {
                    let red = UInt32(source[3 * index])
                    let green = UInt32(source[3 * index + 1])
                    let blue = UInt32(source[3 * index + 2])
                    // 299/587/114 in fixed point, rounded.
                    target[index] = UInt8((red * 299 + green * 587 + blue * 114 + 500) / 1000)
                }
            }
        }
        return Bitmap(width: width, height: height, format: .grey8, pixels: out)
    }

    /// The part of the image inside `rect`, clipped to the image. Returns nil when nothing is left.
    public func cropped(x: Int, y: Int, width cropWidth: Int, height cropHeight: Int) -> Bitmap? {
        let left = max(0, x)
        let top = max(0, y)
        let right = min(width, x + cropWidth)
        let bottom = min(height, y + cropHeight)
        guard right > left, bottom > top else { return nil }
        let channels = format.channels
        let rowBytes = (right - left) * channels
        var out = [UInt8]()
        out.reserveCapacity(rowBytes * (bottom - top))
        for row in top..<bottom {
            let start = (row * width + left) * channels
            out.append(contentsOf: pixels[start..<(start + rowBytes)])
        }
        return Bitmap(width: right - left, height: bottom - top, format: format, pixels: out)
    }

    /// The image resampled to a new size: halved by 2 × 2 averaging while it is more than
    /// twice too large (so small text does not alias), then bilinear.
    public func scaled(toWidth newWidth: Int, height newHeight: Int) -> Bitmap {
        precondition(newWidth > 0 && newHeight > 0, "a bitmap needs a positive size")
        if newWidth == width && newHeight == height { return self }
        if width >= 2 * newWidth && height >= 2 * newHeight && width >= 2 && height >= 2 {
            return halved().scaled(toWidth: newWidth, height: newHeight)
        }
        // Bilinear, as ``resampled(width:height:fill:source:)`` would sample it, with each
        // column's and row's source positions worked out once instead of at every pixel: the
        // same pixels, several times faster (the recognizers scale every line they read).
        let columns = Self.samplePositions(count: newWidth, scale: Double(width) / Double(newWidth), limit: width)
        let rows = Self.samplePositions(count: newHeight, scale: Double(height) / Double(newHeight), limit: height)
        let channels = format.channels
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * channels)
        pixels.withUnsafeBufferPointer { pixels in
            out.withUnsafeMutableBufferPointer { target in
                for (targetY, row) in rows.enumerated() {
                    let upper = row.first * width
                    let lower = row.second * width
                    for (targetX, column) in columns.enumerated() {
                        let base = (targetY * newWidth + targetX) * channels
                        for channel in 0..<channels {
                            let p00 = Double(pixels[(upper + column.first) * channels + channel])
                            let p01 = Double(pixels[(upper + column.second) * channels + channel])
                            let p10 = Double(pixels[(lower + column.first) * channels + channel])
                            let p11 = Double(pixels[(lower + column.second) * channels + channel])
                            let top = p00 + (p01 - p00) * column.fraction
                            let bottom = p10 + (p11 - p10) * column.fraction
                            target[base + channel] = UInt8(max(0, min(255, (top + (bottom - top) * row.fraction).rounded())))
                        }
                    }
                }
            }
        }
        return Bitmap(width: newWidth, height: newHeight, format: format, pixels: out)
    }

    /// Where each of `count` target pixels along one axis samples a source of `limit` pixels
    /// (centres aligned, clamped to the edge): the two source pixels and the second's weight.
    static func samplePositions(count: Int, scale: Double, limit: Int) -> [(first: Int, second: Int, fraction: Double)] {
        let last = Double(limit - 1)
        return (0..<count).map { index in
            let position = min(last, max(0, (Double(index) + 0.5) * scale - 0.5))
            let first = Int(position)
            return (first, min(first + 1, limit - 1), position - Double(first))
        }
    }

    /// The image at half the size, each pixel the mean of a 2 × 2 block.
    public func halved() -> Bitmap {
        let newWidth = width / 2
        let newHeight = height / 2
        let channels = format.channels
        var out = [UInt8](repeating: 0, count: newWidth * newHeight * channels)
        pixels.withUnsafeBufferPointer { source in
            out.withUnsafeMutableBufferPointer { target in
                for y in 0..<newHeight {
                    let top = 2 * y * width
                    let bottom = (2 * y + 1) * width
                    for x in 0..<newWidth {
                        for channel in 0..<channels {
                            let sum =
                                Int(source[(top + 2 * x) * channels + channel])
                                + Int(source[(top + 2 * x + 1) * channels + channel])
                                + Int(source[(bottom + 2 * x) * channels + channel])
                                + Int(source[(bottom + 2 * x + 1) * channels + channel])
                            target[(y * newWidth + x) * channels + channel] = UInt8((sum + 2) / 4)
                        }
                    }
                }
            }
        }
        return Bitmap(width: newWidth, height: newHeight, format: format, pixels: out)
    }

    /// A new image of the given size whose pixel (x, y) is this image sampled bilinearly at
    /// `source(x, y)`; points outside this image get `fill`.
    ///
    /// Scaling, rotation and perspective correction are all this with another mapping.
    public func resampled(
        width newWidth: Int,
        height newHeight: Int,
        fill: UInt8,
        source: (Int, Int) -> (Double, Double)
    )
        -> Bitmap
    {
        let channels = format.channels
        var out = [UInt8](repeating: fill, count: newWidth * newHeight * channels)
        let maxX = Double(width - 1)
        let maxY = Double(height - 1)
        pixels.withUnsafeBufferPointer { pixels in
            out.withUnsafeMutableBufferPointer { target in
                for targetY in 0..<newHeight {
                    for targetX in 0..<newWidth {
                        let (sourceX, sourceY) = source(targetX, targetY)
                        guard sourceX >= 0, sourceY >= 0, sourceX <= maxX, sourceY <= maxY else { continue }
                        let x0 = Int(sourceX)
                        let y0 = Int(sourceY)
                        let x1 = min(x0 + 1, width - 1)
                        let y1 = min(y0 + 1, height - 1)
                        let fx = sourceX - Double(x0)
                        let fy = sourceY - Double(y0)
                        let base = (targetY * newWidth + targetX) * channels
                        for channel in 0..<channels {
                            let p00 = Double(pixels[(y0 * width + x0) * channels + channel])
                            let p01 = Double(pixels[(y0 * width + x1) * channels + channel])
                            let p10 = Double(pixels[(y1 * width + x0) * channels + channel])
                            let p11 = Double(pixels[(y1 * width + x1) * channels + channel])
                            let top = p00 + (p01 - p00) * fx
                            let bottom = p10 + (p11 - p10) * fx
                            target[base + channel] = UInt8(max(0, min(255, (top + (bottom - top) * fy).rounded())))
                        }
                    }
                }
            }
        }
        return Bitmap(width: newWidth, height: newHeight, format: format, pixels: out)
    }
}

extension Bitmap {
    /// The image rotated about its centre by `degrees` (positive turns it clockwise on
    /// screen), same size, with uncovered corners filled with `fill`. Bilinear.
    public func rotated(degrees: Double, fill: UInt8 = 255) -> Bitmap {
        if degrees == 0 { return self }
        let radians = degrees * .pi / 180
        let cosine = cos(radians)
        let sine = sin(radians)
        let centreX = Double(width - 1) / 2
        let centreY = Double(height - 1) / 2
        // Inverse mapping: where in the source does each target pixel come from?
        return resampled(width: width, height: height, fill: fill) { x, y in
            let dx = Double(x) - centreX
            let dy = Double(y) - centreY
            return (cosine * dx + sine * dy + centreX, -sine * dx + cosine * dy + centreY)
        }
    }
}

extension Bitmap {
    /// The image turned by `quarterTurns` × 90° clockwise on screen, exactly (pixels moved,
    /// never resampled); a quarter turn swaps width and height.
    public func turned(quarterTurns: Int) -> Bitmap {
        let turns = ((quarterTurns % 4) + 4) % 4
        guard turns != 0 else { return self }
        let channels = format.channels
        let newWidth = turns == 2 ? width : height
        let newHeight = turns == 2 ? height : width
        var out = [UInt8](repeating: 0, count: pixels.count)
        for y in 0..<height {
            for x in 0..<width {
                // Where the source pixel (x, y) lands.
                let (nx, ny): (Int, Int)
                switch turns {
                case 1: (nx, ny) = (height - 1 - y, x)
                case 2: (nx, ny) = (width - 1 - x, height - 1 - y)
                default: (nx, ny) = (y, width - 1 - x)
                }
                let source = (y * width + x) * channels
                let target = (ny * newWidth + nx) * channels
                for channel in 0..<channels { out[target + channel] = pixels[source + channel] }
            }
        }
        return Bitmap(width: newWidth, height: newHeight, format: format, pixels: out)
    }
}
