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

    /// The Argon2id policy Burrow writes now. Policy 1 (earlier stores, no field) allowed fewer
    /// than 3 passes and less than 64 MiB by default; such parameters are raised at the next
    /// successful unlock (`BurrowStore.open`), as the design's PBKDF2 v1→v2 migration does.
    static let currentPolicy = 2

    var kdf: StoreKDFParameters
    var keyCheck: [UInt8]
    /// SQLCipher's page size for this store; recorded so a later SQLCipher with other defaults
    /// still opens it.
    var cipherPageSize: Int
    var policy: Int = StoreHeader.currentPolicy
    /// A passphrase change under way (`BurrowStore.changePassphrase`): the new parameters and
    /// check value, recorded before the database is swapped so a crash at any point is settled
    /// at the next open with whichever passphrase the database is under.
    var pending: Pending?

    struct Pending: Equatable {
        var kdf: StoreKDFParameters
        var keyCheck: [UInt8]
    }

    /// The on-disk JSON shape.
    private struct Wire: Codable {
        var format: String
        var version: Int
        var kdf: KDF
        var key_check: String
        var cipher_page_size: Int
        var pending: PendingWire?

        struct KDF: Codable {
            var algorithm: String
            var memory_mib: Int
            var passes: Int
            var salt: String
            var policy: Int?
        }

        struct PendingWire: Codable {
            var kdf: KDF
            var key_check: String
        }
    }

    func encoded() throws -> Data {
        func wireKDF(_ k: StoreKDFParameters, policy: Int) -> Wire.KDF {
            .init(algorithm: Self.kdfAlgorithm, memory_mib: k.memoryMiB, passes: k.passes, salt: Sodium.hex(k.salt), policy: policy)
        }
        let wire = Wire(
            format: Self.format, version: Self.version, kdf: wireKDF(kdf, policy: policy),
            key_check: Sodium.hex(keyCheck), cipher_page_size: cipherPageSize,
            pending: pending.map { .init(kdf: wireKDF($0.kdf, policy: Self.currentPolicy), key_check: Sodium.hex($0.keyCheck)) })
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
        func parameters(_ k: Wire.KDF, check checkHex: String) -> (StoreKDFParameters, [UInt8])? {
            guard k.algorithm == kdfAlgorithm, let salt = Sodium.unhex(k.salt, expectedCount: StoreKDFParameters.saltCount),
                  let check = Sodium.unhex(checkHex, expectedCount: 32),
                  let kdf = try? StoreKDFParameters(memoryMiB: k.memory_mib, passes: k.passes, salt: salt) else { return nil }
            return (kdf, check)
        }
        guard let (kdf, check) = parameters(wire.kdf, check: wire.key_check), StoreHeader.allowedPageSizes.contains(wire.cipher_page_size),
              (1...currentPolicy).contains(wire.kdf.policy ?? 1)
        else { throw corrupt }
        var header = StoreHeader(kdf: kdf, keyCheck: check, cipherPageSize: wire.cipher_page_size, policy: wire.kdf.policy ?? 1)
        if let pending = wire.pending {
            guard let (pendingKDF, pendingCheck) = parameters(pending.kdf, check: pending.key_check) else { throw corrupt }
            header.pending = Pending(kdf: pendingKDF, keyCheck: pendingCheck)
        }
        return header
    }

    static let allowedPageSizes: Set<Int> = [1024, 2048, 4096, 8192, 16384, 32768, 65536]
}
