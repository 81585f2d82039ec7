public import OCRBridge

/// Grey-level image operations the scanner uses to prepare text for Tesseract.
extension Bitmap {
    /// Stretches grey levels so the darkest `clip` share of pixels become black and the
    /// brightest become white: faint or washed-out text gets full contrast.
    public func stretchedContrast(clip: Double = 0.01) -> Bitmap {
        let grey = self.grey()
        var histogram = [Int](repeating: 0, count: 256)
        for value in grey.pixels { histogram[Int(value)] += 1 }
        let total = grey.pixels.count
        let cut = Int(Double(total) * clip)
        var low = 0
        var seen = 0
        while low < 255 && seen + histogram[low] <= cut {
            seen += histogram[low]
            low += 1
        }
        var high = 255
        seen = 0
        while high > 0 && seen + histogram[high] <= cut {
            seen += histogram[high]
            high -= 1
        }
        guard high > low else { return grey }
        let scale = 255.0 / Double(high - low)
        let table = (0..<256).map { value in UInt8(max(0, min(255, (Double(value - low) * scale).rounded()))) }
        return Bitmap(width: width, height: height, format: .grey8, pixels: grey.pixels.map { table[Int($0)] })
    }

    /// The image with black and white swapped.
    public func inverted() -> Bitmap {
        Bitmap(width: width, height: height, format: format, pixels: pixels.map { 255 - $0 })
    }

    /// Otsu's threshold: the grey level that best splits the histogram into two classes.
    public func otsuThreshold() -> UInt8 {
        let grey = self.grey()
        var histogram = [Double](repeating: 0, count: 256)
        for value in grey.pixels { histogram[Int(value)] += 1 }
        let total = Double(grey.pixels.count)
        let sumAll = histogram.enumerated().reduce(0.0) { $0 + Double($1.offset) * $1.element }
        var weightBackground = 0.0
        var sumBackground = 0.0
        var best = (threshold: 0, variance: -1.0)
        for level in 0..<256 {
            weightBackground += histogram[level]
            if weightBackground == 0 { continue }
            let weightForeground = total - weightBackground
            if weightForeground == 0 { break }
            sumBackground += Double(level) * histogram[level]
            let meanBackground = sumBackground / weightBackground
            let meanForeground = (sumAll - sumBackground) / weightForeground
            let variance = weightBackground * weightForeground * (meanBackground - meanForeground) * (meanBackground - meanForeground)
            if variance > best.variance { best = (level, variance) }
        }
        return UInt8(best.threshold)
    }

    /// Black (0) where the grey level is at or below `threshold`, white (255) elsewhere.
    public func binarized(threshold: UInt8) -> Bitmap {
        let grey = self.grey()
        return Bitmap(width: width, height: height, format: .grey8, pixels: grey.pixels.map { $0 <= threshold ? 0 : 255 })
    }

    /// Adds a border of `value` around the image: Tesseract reads text better away from the edges.
    public func padded(by margin: Int, value: UInt8 = 255) -> Bitmap {
        let grey = self.grey()
        let newWidth = width + 2 * margin
        var out = [UInt8](repeating: value, count: newWidth * (height + 2 * margin))
        for row in 0..<height {
            let target = (row + margin) * newWidth + margin
            out.replaceSubrange(target..<(target + width), with: grey.pixels[(row * width)..<((row + 1) * width)])
        }
        return Bitmap(width: newWidth, height: height + 2 * margin, format: .grey8, pixels: out)
    }

    /// The mean grey level.
    public var meanLevel: Double {
        let grey = self.grey()
        return Double(grey.pixels.reduce(0) { $0 + Int($1) }) / Double(grey.pixels.count)
    }
}

extension Bitmap {
    /// Black where a pixel is darker than the mean of the `window` × `window` square around
    /// it by more than `offset`, white elsewhere: a threshold that follows glare and
    /// gradients across the image, where one global threshold cannot.
    public func adaptiveBinarized(window: Int, offset: Int = 8) -> Bitmap {
        let grey = self.grey()
        let means = grey.localMeans(window: window)
        var out = [UInt8](repeating: 255, count: grey.pixels.count)
        for index in grey.pixels.indices where Int(grey.pixels[index]) < means[index] - offset { out[index] = 0 }
        return Bitmap(width: width, height: height, format: .grey8, pixels: out)
    }

    /// The mean grey level of the `window` × `window` square around each pixel (clipped at
    /// the image's edges), from an integral image: the same cost whatever the window.
    func localMeans(window: Int) -> [Int] {
        let grey = self.grey()
        let width = grey.width
        let height = grey.height
        // Integral image, one row and column of zeros in front.
        var integral = [Int](repeating: 0, count: (width + 1) * (height + 1))
        for y in 0..<height {
            var rowSum = 0
            for x in 0..<width {
                rowSum += Int(grey.pixels[y * width + x])
                integral[(y + 1) * (width + 1) + x + 1] = integral[y * (width + 1) + x + 1] + rowSum
            }
        }
        let half = max(1, window / 2)
        var means = [Int](repeating: 0, count: width * height)
        for y in 0..<height {
            let top = max(0, y - half)
            let bottom = min(height, y + half + 1)
            for x in 0..<width {
                let left = max(0, x - half)
                let right = min(width, x + half + 1)
                let sum =
                    integral[bottom * (width + 1) + right] - integral[top * (width + 1) + right]
                    - integral[bottom * (width + 1) + left] + integral[top * (width + 1) + left]
                means[y * width + x] = sum / ((bottom - top) * (right - left))
            }
        }
        return means
    }
}

extension Bitmap {
    /// A binary image (0 = ink) with ink thinner than `size` pixels removed: a morphological
    /// opening (erode, then dilate, with a `size` × `size` square). Thin lines of a card's
    /// design that cross the digits go; the digits' thicker strokes stay.
    public func opened(size: Int) -> Bitmap {
        let grey = self.grey()
        let radius = max(1, size / 2)
        let width = self.width
        let height = self.height
        // Ink is 0. Erosion keeps ink only where the whole window is ink; dilation spreads
        // ink over the window. Both are separable: a pass along rows, then along columns.
        func pass(_ source: [UInt8], horizontal: Bool, erode: Bool) -> [UInt8] {
            var out = source
            for y in 0..<height {
                for x in 0..<width {
                    var ink = erode
                    for offset in -radius...radius {
                        let xx = horizontal ? min(width - 1, max(0, x + offset)) : x
                        let yy = horizontal ? y : min(height - 1, max(0, y + offset))
                        let isInk = source[yy * width + xx] == 0
                        if erode && !isInk {
                            ink = false
                            break
                        }
                        if !erode && isInk {
                            ink = true
                            break
                        }
                    }
                    out[y * width + x] = ink ? 0 : 255
                }
            }
            return out
        }
        let eroded = pass(pass(grey.pixels, horizontal: true, erode: true), horizontal: false, erode: true)
        let opened = pass(pass(eroded, horizontal: true, erode: false), horizontal: false, erode: false)
        return Bitmap(width: width, height: height, format: .grey8, pixels: opened)
    }
}

extension Bitmap {
    /// The image's local contrast: each pixel against the mean of the `window` × `window`
    /// square around it, mapped so text is dark on an even light ground (about 200)
    /// whatever the card's colours, gradients or glare.
    ///
    /// Text is taken to be the side, darker or lighter than its surroundings, that reaches
    /// further: printed text is dark on a light card or light on a dark one; the faces of
    /// embossed characters catch the light.
    public func flattened(window: Int) -> Bitmap {
        let grey = self.grey()
        let width = grey.width
        let height = grey.height
        guard width > 0, height > 0 else { return grey }
        let means = grey.localMeans(window: window)
        var difference = [Int](repeating: 0, count: width * height)
        var histogram = [Int](repeating: 0, count: 511)
        for index in grey.pixels.indices {
            let value = Int(grey.pixels[index]) - means[index]
            difference[index] = value
            histogram[value + 255] += 1
        }
        // How far the darkest and the lightest 2 % reach from their surroundings: walk the
        // histogram in from one end until the tail is passed.
        let tail = max(1, width * height / 50)
        func binPastTail(_ bins: some Sequence<Int>) -> Int {
            var seen = 0
            for bin in bins {
                seen += histogram[bin]
                if seen > tail { return bin }
            }
            return 255
        }
        let darkReach = 255 - binPastTail(0..<511)
        let lightReach = binPastTail(stride(from: 510, through: 0, by: -1)) - 255
        let sign = lightReach > darkReach ? -1 : 1
        let reach = max(1, max(darkReach, lightReach))
        let pixels = difference.map { UInt8(clamping: 200 + sign * $0 * 150 / reach) }
        return Bitmap(width: width, height: height, format: .grey8, pixels: pixels)
    }
}
