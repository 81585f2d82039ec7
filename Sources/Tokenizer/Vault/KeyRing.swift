import CardCapture
public import Crypto
package import Foundation

/// The vault's keys: one 256-bit master key, and the keys derived from it (HKDF-SHA256), one
/// per purpose, so that the key that encrypts card numbers is never the one for CVCs or for
/// fingerprints.
///
/// Every sealed record names the key id it was sealed under, so keys can rotate: a record
/// under another key id is refused with a clear error rather than misread.
///
/// ```swift
/// let keys = KeyRing(masterKey: SymmetricKey(size: .bits256))
/// let sealed = try keys.seal(Array("secret".utf8), for: .card, context: "tok_…")
/// ```
public struct KeyRing: Sendable {
    /// What a derived key is for.
    package enum Purpose: String {
        case card = "card-v1"
        case cvc = "cvc-v1"
        case fingerprint = "fingerprint-v1"
        case apiKey = "api-key-v1"
        case keyID = "key-id-v1"
        case request = "request-v1"
        case pageForm = "page-form-v1"
        case webhookSecret = "webhook-secret-v1"
        case storedAnswer = "stored-answer-v1"
    }

    /// Names the master key without revealing anything of it: `key_` and 16 hex digits.
    public let keyID: String
    private let cardKey: SymmetricKey
    private let cvcKey: SymmetricKey
    private let fingerprintKey: SymmetricKey
    private let apiKeyKey: SymmetricKey
    /// HMACs keyed once: each use copies one and feeds it, rather than keying a new one (the
    /// key's padding blocks hashed again) on every request.
    private let fingerprintMAC: HMAC<SHA256>
    private let apiKeyMAC: HMAC<SHA256>
    private let requestMAC: HMAC<SHA256>
    private let pageFormKey: SymmetricKey
    private let webhookSecretKey: SymmetricKey
    private let storedAnswerKey: SymmetricKey

    public init(masterKey: SymmetricKey) {
        func derive(_ purpose: Purpose, bytes: Int = 32) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: masterKey,
                salt: Array("card-capture vault".utf8),
                info: Array(purpose.rawValue.utf8),
                outputByteCount: bytes
            )
        }
        self.cardKey = derive(.card)
        self.cvcKey = derive(.cvc)
        self.fingerprintKey = derive(.fingerprint)
        self.apiKeyKey = derive(.apiKey)
        self.fingerprintMAC = HMAC(key: fingerprintKey)
        self.apiKeyMAC = HMAC(key: apiKeyKey)
        self.requestMAC = HMAC(key: derive(.request))
        self.pageFormKey = derive(.pageForm)
        self.webhookSecretKey = derive(.webhookSecret)
        self.storedAnswerKey = derive(.storedAnswer)
        self.keyID = "key_" + derive(.keyID, bytes: 8).withUnsafeBytes { Self.hex($0) }
    }

    /// Encrypts with AES-GCM under the purpose's key; `context` (the record's id) is
    /// authenticated with it, so a sealed value moved to another record does not open. The
    /// box comes back as the store keeps it, nonce first: no copy into an array and back.
    package func seal(_ plaintext: [UInt8], for purpose: Purpose, context: String) throws(VaultError) -> Data {
        do {
            // A fresh random nonce of AES-GCM's 12 bytes, drawn in one system call.
            let nonce = try AES.GCM.Nonce(data: SystemRandom.bytes(12))
            let box = try AES.GCM.seal(plaintext, using: key(for: purpose), nonce: nonce, authenticating: Array(context.utf8))
            guard let combined = box.combined else { throw VaultError(.storage, "AES-GCM gave no combined box") }
            return combined
        } catch let error as VaultError {
            throw error
        } catch {
            throw VaultError(.storage, "could not encrypt card data")
        }
    }

    /// Decrypts what ``seal(_:for:context:)`` made for the same record.
    package func open(_ sealed: some DataProtocol, for purpose: Purpose, context: String) throws(VaultError) -> [UInt8] {
        do {
            let box = try AES.GCM.SealedBox(combined: sealed)
            return Array(try AES.GCM.open(box, using: key(for: purpose), authenticating: Array(context.utf8)))
        } catch {
            throw VaultError(.cardDataUnavailable, "card data for \(context) does not decrypt under \(keyID)")
        }
    }

    /// A keyed fingerprint of a card number for one merchant: the same card gives the same
    /// fingerprint, and nobody without the key can test a guessed number against it.
    /// Fingerprints of one card differ between merchants.
    func fingerprint(of pan: PAN, merchantID: String) -> String {
        var mac = fingerprintMAC
        mac.update(data: Array((merchantID + ":" + pan.revealed).utf8))
        return Self.hex(mac.finalize())
    }

    /// What the store keeps of a request sent with an Idempotency-Key, to know it again: a
    /// keyed hash (HMAC-SHA256), hex. A token request's body holds a card number, and a plain
    /// hash of it could be tested against guessed numbers.
    func requestDigest(_ request: [UInt8]) -> String {
        var mac = requestMAC
        mac.update(data: request)
        return Self.hex(mac.finalize())
    }

    /// The hosted page's anti-forgery code for a form of `sessionID` shown at `issued` (Unix
    /// seconds) to the browser holding `nonce` (its cookie): HMAC-SHA256, hex. Another site can
    /// make a browser post the form, but cannot read the code that goes with its cookie.
    package func pageFormCode(sessionID: String, nonce: String, issued: Int) -> String {
        pageCode("form \(sessionID):\(nonce):\(issued)")
    }

    /// Whether `code` is ``pageFormCode(sessionID:nonce:issued:)``'s, compared in constant time.
    package func pageFormCodeIsValid(_ code: String, sessionID: String, nonce: String, issued: Int) -> Bool {
        pageCodeIsValid(code, for: "form \(sessionID):\(nonce):\(issued)")
    }

    /// The code that binds a scan the hosted page's camera made to the session it was made
    /// for and the browser whose camera made it (`nonce`, its cookie) (HMAC-SHA256, hex): that
    /// browser's form may then pay with the scan instead of a typed number.
    package func pageScanCode(sessionID: String, scanID: String, nonce: String) -> String {
        pageCode("scan \(sessionID):\(scanID):\(nonce)")
    }

    /// Whether `code` is ``pageScanCode(sessionID:scanID:nonce:)``'s, compared in constant time.
    package func pageScanCodeIsValid(_ code: String, sessionID: String, scanID: String, nonce: String) -> Bool {
        pageCodeIsValid(code, for: "scan \(sessionID):\(scanID):\(nonce)")
    }

    /// The tag that shows a page cookie's nonce was issued by this vault (HMAC-SHA256, hex):
    /// a value a client chose is not taken.
    package func pageCookieTag(nonce: String) -> String {
        pageCode("cookie \(nonce)")
    }

    /// Whether `tag` is ``pageCookieTag(nonce:)``'s, compared in constant time.
    package func pageCookieTagIsValid(_ tag: String, nonce: String) -> Bool {
        pageCodeIsValid(tag, for: "cookie \(nonce)")
    }

    private func pageCode(_ message: String) -> String {
        Self.hex(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: pageFormKey))
    }

    private func pageCodeIsValid(_ code: String, for message: String) -> Bool {
        guard let bytes = Self.bytes(fromHex: code) else { return false }
        return HMAC<SHA256>.isValidAuthenticationCode(bytes, authenticating: Array(message.utf8), using: pageFormKey)
    }

    /// What the store keeps of an API key: a keyed hash (HMAC-SHA256), hex. A copy of the
    /// database alone does not let anyone test guessed keys.
    func apiKeyDigest(_ key: String) -> String {
        Self.hex(apiKeyCode(key))
    }

    /// The API key's HMAC, to look up by its hex.
    func apiKeyCode(_ key: String) -> HMAC<SHA256>.MAC {
        var mac = apiKeyMAC
        mac.update(data: Array(key.utf8))
        return mac.finalize()
    }

    private func key(for purpose: Purpose) -> SymmetricKey {
        switch purpose {
        case .card: cardKey
        case .cvc: cvcKey
        case .apiKey: apiKeyKey
        case .webhookSecret: webhookSecretKey
        case .storedAnswer: storedAnswerKey
        case .fingerprint, .keyID, .request, .pageForm: fingerprintKey
        }
    }

    package static func bytes(fromHex text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var bytes: [UInt8] = []
        for index in stride(from: 0, to: digits.count, by: 2) {
            guard let high = hexValue(digits[index]), let low = hexValue(digits[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// Lower-case hex of the bytes.
    package static func hex(_ bytes: some ContiguousBytes) -> String {
        bytes.withUnsafeBytes { bytes in hex(raw: bytes) }
    }

    private static func hex(raw bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            var index = 0
            for byte in bytes {
                text[index] = hexDigits[Int(byte >> 4)]
                text[index + 1] = hexDigits[Int(byte & 15)]
                index += 2
            }
            return index
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)
}
