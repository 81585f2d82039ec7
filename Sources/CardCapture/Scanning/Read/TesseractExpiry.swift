import OCRBridge

extension CardScanner {
    /// Reads the strip under the number, where cards print the expiry (and a VALID FROM
    /// date before it on some), in several ways, cheapest first, until the readings agree.
    ///
    /// The strip is flattened first (``Bitmap/flattened(window:)``): gradients, glare and
    /// embossing all come out as dark characters on an even ground. The template reader
    /// reads card typefaces there best; Tesseract, sparse text over the strip, reads the
    /// others. Each reading votes for the dates in it (``ExpiryBallot``).
    ///
    /// With `effort` `.glance` (no number row was found, so the strip is a guess) only the
    /// card-digit model and the templates read it: English's sparse-text readings of a wide
    /// strip cost more than the rest of a scan.
    ///
    /// - Returns: the ballot; its leader is the expiry.
    func readExpiry(
        on card: Bitmap,
        top: Int,
        height: Int,
        numberHeight: Int,
        effort: Effort = .full,
        with engines: Engines,
        into evidence: inout Evidence
    ) throws -> ExpiryBallot {
        var ballot = ExpiryBallot()
        let box = Box(x: card.width / 30, y: top, width: card.width * 28 / 30, height: height)
        guard let strip = card.cropped(x: box.x, y: box.y, width: box.width, height: box.height) else { return ballot }
        // Dates print at about two thirds of the number's height: scaled so they stand
        // some 30 pixels tall.
        let scale = Double(Self.dateScaleHeight) / Double(max(1, numberHeight))
        let sized = strip.scaled(
            toWidth: max(1, Int(Double(strip.width) * scale)),
            height: max(1, Int(Double(strip.height) * scale))
        )
        let window = Self.dateScaleHeight * 4 / 3
        let flat = sized.flattened(window: window).padded(by: 12, value: 200)
        let plain = Self.darkText(sized.stretchedContrast()).padded(by: 12)
        // Flattened text sits near 50 on a ground near 200; design lines drawn lighter than
        // the text fade out at the lower thresholds, and the openings cut the thin ones that
        // cross the characters.
        func cut(_ threshold: UInt8) -> Bitmap { flat.binarized(threshold: threshold) }
        let (cardModel, english) = engines.dateReaders
        let templates = TemplatesReader(minimumCharacters: 4, slash: true)
        let readings: [(reader: any RowReader, image: () -> Bitmap)] = [
            (cardModel, { flat }),
            (cardModel, { plain }),
            (templates, { cut(70) }),
            (templates, { cut(100) }),
            (templates, { cut(140) }),
            (templates, { flat }),
            (templates, { plain.adaptiveBinarized(window: Self.dateScaleHeight * 3 / 2) }),
            (templates, { cut(140).opened(size: 3) }),
            (templates, { cut(100).opened(size: 3) }),
            (english, { cut(140) }),
            (english, { flat }),
            (english, { sized.flattened(window: window / 2).padded(by: 12, value: 200).binarized(threshold: 140) }),
            (english, { plain }),
        ]
        for reading in readings {
            if effort == .glance, reading.reader.source == english.source { break }
            let result = try reading.reader.recognition(in: reading.image())
            if reading.reader.source == templates.source {
                // The templates may miss a date's thin slash: their groups are joined.
                if let line = result.lines.first {
                    evidence.rows.append((box, "templates: " + line.text))
                    ballot.add(Self.slashedDates(line.words.map(\.text)))
                }
            } else {
                evidence.rows.append((box, result.text))
                ballot.add(result.text)
            }
            if ballot.isSettled() { break }
        }
        return ballot
    }

    /// How tall, in pixels, the number's digits are made for reading the dates under it.
    static let dateScaleHeight = 48

    /// Joins `MM` followed by `YY` or `YYYY` into `MM/YY`: the template reader may miss a
    /// thin slash between the two, and in the strip under the number nothing else is shaped
    /// like that.
    static func slashedDates(_ words: [String]) -> String {
        var out: [String] = []
        var index = 0
        while index < words.count {
            let word = words[index]
            if index + 1 < words.count, word.count == 2, word.allSatisfy(\.isASCIIDigit),
                [2, 4].contains(words[index + 1].count), words[index + 1].allSatisfy(\.isASCIIDigit)
            {
                out.append(word + "/" + words[index + 1])
                index += 2
            } else {
                out.append(word)
                index += 1
            }
        }
        return out.joined(separator: " ")
    }
}
