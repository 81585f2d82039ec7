import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#endif

extension KeyRing {
    /// Where a master key came from, so the server can say so once at start.
    public enum Source: Sendable, Equatable {
        /// From `CAPTURE_MASTER_KEY`.
        case environment
        /// Read from the key file.
        case file(String)
        /// Made just now and written to the key file (mode 0600).
        case created(String)
    }

    /// The environment variable that may hold the master key (64 hex digits).
    public static let environmentVariable = "CAPTURE_MASTER_KEY"

    /// The master key for a store: from `CAPTURE_MASTER_KEY` when set, else from the key file,
    /// else, for a store that holds no data yet, a new one written to the key file with
    /// mode 0600.
    ///
    /// - Parameters:
    ///   - environment: the value of `CAPTURE_MASTER_KEY`, if set.
    ///   - file: the key file, beside the database (`vault.sqlite` → `vault.sqlite.key`).
    ///   - storeKeyID: the key id the store's data is under; nil for a store never used.
    /// - Throws: ``VaultError/Code/keyMissing`` when the store has data but no key is found
    ///   (never silently a new key: every stored card would be lost),
    ///   ``VaultError/Code/keyMismatch`` when the key is not the store's,
    ///   ``VaultError/Code/keyUnreadable`` when the file or variable is not a key.
    public static func load(environment: String?, file: String, storeKeyID: String?) throws(VaultError) -> (KeyRing, Source) {
        let ring: KeyRing
        let source: Source
        if let environment {
            guard let key = parseKey(environment) else {
                throw VaultError(.keyUnreadable, "\(environmentVariable) is not a 256-bit key: give 64 hex digits")
            }
            ring = KeyRing(masterKey: key)
            source = .environment
        } else if FileManager.default.fileExists(atPath: file) {
            guard let data = FileManager.default.contents(atPath: file), let key = parseKey(String(decoding: data, as: UTF8.self))
            else {
                throw VaultError(.keyUnreadable, "the key file \(file) is not a 256-bit key (64 hex digits); restore it from your backup")
            }
            ring = KeyRing(masterKey: key)
            source = .file(file)
        } else if let storeKeyID {
            throw VaultError(
                .keyMissing,
                "the vault holds card data under \(storeKeyID) but its key file \(file) is missing: restore the file or set \(environmentVariable); no new key was made, because it could not read the cards already stored"
            )
        } else {
            let key = SymmetricKey(size: .bits256)
            try write(key, to: file)
            ring = KeyRing(masterKey: key)
            source = .created(file)
        }
        if let storeKeyID, storeKeyID != ring.keyID {
            throw VaultError(
                .keyMismatch,
                "the vault's data is under \(storeKeyID) but the master key given is \(ring.keyID): use the key this vault was made with"
            )
        }
        return (ring, source)
    }

    /// 64 hex digits, surrounding white space allowed.
    static func parseKey(_ text: String) -> SymmetricKey? {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard trimmed.utf8.count == 64, let bytes = bytes(fromHex: trimmed) else { return nil }
        return SymmetricKey(data: bytes)
    }

    static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Creates the file (never over an existing one) readable by its owner only, then writes.
    static func write(_ key: SymmetricKey, to path: String) throws(VaultError) {
        let text = key.withUnsafeBytes { hex($0) } + "\n"
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard descriptor >= 0 else {
            throw VaultError(.keyUnreadable, "could not create the key file \(path): \(String(cString: strerror(errno)))")
        }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        let synced = fsync(descriptor) == 0
        Glibc.close(descriptor)
        guard written == bytes.count, synced else {
            // A half-written key must not be taken for the key next time.
            unlink(path)
            throw VaultError(.keyUnreadable, "could not write the key file \(path)")
        }
    }
}
