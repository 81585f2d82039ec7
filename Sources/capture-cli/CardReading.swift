import ArgumentParser
import CardCapture
import Foundation

/// A card read off an image for `tokenize` and `charge-url`, finished by hand with
/// `manualFallback` when the scan finds no number, an unsure one or no expiry.
struct CardReading {
    var manualFallback: Bool
    /// Whether standard output carries JSON (the prompts then go to standard error).
    var resultIsJSON: Bool

    /// The card off `image`; `given` overrides the expiry read, `cvc` and `holder` fill what the card does not show.
    func read(_ image: String, expiry given: Expiry?, cvc: String?, holder: String?) throws -> CardFields {
        var scanned: ScanResult?
        var reason: String?
        do {
            var result = try CardScanner(workers: 1).scan(contentsOf: image)
            result.expiry = given ?? result.expiry
            scanned = result
            reason = ManualEntry.reasonToAsk(after: result, expiryNeeded: true)
        } catch {
            guard manualFallback else {
                Terminal.writeError("capture-cli: cannot read \(image): \(error)")
                throw ExitCode(2)
            }
            reason = "\(image) could not be scanned (\(error))"
        }
        if let scanned, let pan = scanned.pan, let expiry = scanned.expiry, reason == nil || !manualFallback {
            return CardFields(number: pan.revealed, month: expiry.month, year: expiry.year, cvc: cvc, holder: holder ?? scanned.holder)
        }
        guard manualFallback else {
            if scanned?.pan == nil {
                Terminal.writeError(
                    "capture-cli: no card number could be read off \(image); give it with --number, or type it with --manual-fallback"
                )
            } else {
                Terminal.writeError("capture-cli: the expiry could not be read off the image; give it with --expiry MM/YY")
            }
            throw ExitCode(1)
        }
        var defaults = scanned.map(ManualEntry.defaults(from:)) ?? ManualEntry.Values()
        defaults.holder = holder ?? defaults.holder
        let fields: [ManualEntry.Field] = [.number, .expiry] + (cvc == nil ? [.cvc] : []) + (holder == nil ? [.holder] : [])
        var entry = ManualEntry(fields: fields, defaults: defaults)
        var prompt = EntryPrompt(resultIsJSON: resultIsJSON)
        return CardFields(try prompt.card(from: &entry, reason: reason), cvc: cvc, holder: holder)
    }
}
