import Foundation

/// The plaintext header beside the database: what is needed before the database can be
/// opened (Argon2id parameters and salt, SQLCipher page size) plus the key-check value.
/// Nothing in it is secret; the check value is an HMAC under the derived key.
struct StoreHeader: Equatable {
    static let format = "burrow-store"
    static let version = 1
    static let kdfAlgorithm = "argon2id13"
    /// A header is a few hundred bytes; anything far larger is not ours.
    static let maximumSize = 64 * 1024

    var kdf: StoreKDFParameters
    var keyCheck: [UInt8]
    /// SQLCipher's page size for this store; recorded so a later SQLCipher with other defaults
    /// still opens it.
    var cipherPageSize: Int

    /// The on-disk JSON shape.
    private struct Wire: Codable {
        var format: String
        var version: Int
        var kdf: KDF
        var key_check: String
        var cipher_page_size: Int

        struct KDF: Codable {
            var algorithm: String
            var memory_mib: Int
            var passes: Int
            var salt: String
        }
    }

    func encoded() throws -> Data {
        let wire = Wire(
            format: Self.format, version: Self.version,
            kdf: .init(algorithm: Self.kdfAlgorithm, memory_mib: kdf.memoryMiB, passes: kdf.passes, salt: Sodium.hex(kdf.salt)),
            key_check: Sodium.hex(keyCheck), cipher_page_size: cipherPageSize)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        do {
            var data = try encoder.encode(wire)
            data.append(0x0A)
            return data
        } catch {
            throw StoreError.invalidInput("the store header cannot be encoded")
        }
    }

    /// Parses and validates a header; any deviation is damage (`storeCorrupt`).
    static func decode(_ data: Data) throws -> StoreHeader {
        let corrupt = StoreError.storeCorrupt("the store header is unreadable")
        guard data.count <= maximumSize, let wire = try? JSONDecoder().decode(Wire.self, from: data) else { throw corrupt }
        guard wire.format == format, wire.kdf.algorithm == kdfAlgorithm else { throw corrupt }
        guard wire.version == version else {
            throw StoreError.storeCorrupt("the store header has unknown version \(wire.version)")
        }
        guard let salt = Sodium.unhex(wire.kdf.salt, expectedCount: StoreKDFParameters.saltCount),
              let check = Sodium.unhex(wire.key_check, expectedCount: 32),
              let kdf = try? StoreKDFParameters(memoryMiB: wire.kdf.memory_mib, passes: wire.kdf.passes, salt: salt),
              StoreHeader.allowedPageSizes.contains(wire.cipher_page_size)
        else { throw corrupt }
        return StoreHeader(kdf: kdf, keyCheck: check, cipherPageSize: wire.cipher_page_size)
    }

    static let allowedPageSizes: Set<Int> = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
}
