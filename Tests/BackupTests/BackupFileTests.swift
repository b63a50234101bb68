import Backup
import Foundation
import TestSupport
import XCTest

/// The backup container: round trip, and every way a file can be wrong refused with the right
/// error before anything is used.
final class BackupFileTests: XCTestCase {
    /// Small Argon2id parameters keep the tests fast; the format is the same.
    let quick = try! BackupKDFParameters(passes: 1, memoryKiB: 8 * 1024)
    let passphrase = Array("correct horse battery staple".utf8)

    func testRoundTripAndHeader() throws {
        let content = Array("the family's identity, contacts and history".utf8)
        let file = try BackupFile.seal(content, passphrase: passphrase, kdf: quick)
        XCTAssertEqual(file.count, BackupFile.headerCount + content.count + BackupFile.tagCount)
        XCTAssertEqual(Array(file.prefix(16)), Array("BURROW_BACKUP_V1".utf8))
        XCTAssertEqual(try BackupFile.open(file, passphrase: passphrase), content)
        let header = try BackupFile.header(of: file)
        XCTAssertEqual(header.version, 1)
        XCTAssertEqual(header.kdf, quick)
        // Fresh salt and nonce each time: the same content never seals the same.
        XCTAssertNotEqual(try BackupFile.seal(content, passphrase: passphrase, kdf: quick), file)
        XCTAssertEqual(try BackupFile.open(try BackupFile.seal([], passphrase: [], kdf: quick), passphrase: []), [])
    }

    func testAWrongPassphraseIsSaidAsSuch() throws {
        let file = try BackupFile.seal([1, 2, 3], passphrase: passphrase, kdf: quick)
        XCTAssertThrowsError(try BackupFile.open(file, passphrase: Array("wrong".utf8))) { XCTAssertEqual($0 as? BackupError, .wrongPassphrase) }
    }

    /// Every single flipped bit, in the header and in the body, is refused.
    func testEveryFlippedBitIsRefused() throws {
        let file = try BackupFile.seal(Array("sixteen bytes!!!".utf8), passphrase: passphrase, kdf: quick)
        var outcomes: [String: Int] = [:]
        // The KDF fields make flips slow or refused early; every byte position is flipped once
        // (one bit each, cycling through the eight), so the whole file is covered.
        for index in 0..<file.count {
            var bad = file
            bad[index] ^= UInt8(1 << (index % 8))
            do {
                _ = try BackupFile.open(bad, passphrase: passphrase)
                XCTFail("a flip at byte \(index) was accepted")
            } catch let error as BackupError {
                switch error {
                case .corrupt: outcomes["corrupt", default: 0] += 1
                case .wrongPassphrase: outcomes["wrong", default: 0] += 1
                case .unsupported: outcomes["unsupported", default: 0] += 1
                case .cryptoFailed: XCTFail("byte \(index): \(error)")
                }
            }
        }
        XCTAssertEqual(outcomes.values.reduce(0, +), file.count)
        XCTAssertGreaterThan(outcomes["corrupt"] ?? 0, 16, "the body and the nonce are corrupt: \(outcomes)")
    }

    func testTruncatedUnknownVersionAndMemoryBombs() throws {
        let file = try BackupFile.seal(Array("x".utf8), passphrase: passphrase, kdf: quick)
        for length in [0, 10, 16, BackupFile.headerCount, BackupFile.headerCount + BackupFile.tagCount - 1] {
            XCTAssertThrowsError(try BackupFile.open(Array(file.prefix(length)), passphrase: passphrase), "\(length)") {
                guard case .corrupt = $0 as? BackupError else { return XCTFail("\(length): \($0)") }
            }
        }
        XCTAssertThrowsError(try BackupFile.open(Array("not a backup at all, really not".utf8), passphrase: passphrase)) {
            XCTAssertEqual($0 as? BackupError, .corrupt("not a Burrow backup"))
        }
        func patched(_ offset: Int, _ value: UInt32, width: Int = 4) -> [UInt8] {
            var bad = file
            for i in 0..<width { bad[offset + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(width - 1 - i))) }
            return bad
        }
        // Version 2, and KDF parameters past their bounds: refused by the header's own checks,
        // before any Argon2id work (a 4 GiB memory cost would otherwise be allocated).
        for (bad, what) in [(patched(16, 2, width: 2), "version"), (patched(18, 0), "zero passes"), (patched(18, 17), "17 passes"),
                            (patched(22, 0xFFFF_FFFF), "4 TiB"), (patched(22, 1024 * 1024 + 1), "just over 1 GiB"),
                            (patched(22, 8 * 1024 - 1), "under 8 MiB"), (patched(26, 2), "two lanes")] {
            XCTAssertThrowsError(try BackupFile.open(bad, passphrase: passphrase), what) {
                guard case .unsupported = $0 as? BackupError else { return XCTFail("\(what): \($0)") }
            }
        }
        // At the bounds: 1 GiB and 16 passes are taken (the header parses; no KDF is run here).
        XCTAssertNoThrow(try BackupKDFParameters(passes: 16, memoryKiB: 1024 * 1024))
        XCTAssertNoThrow(try BackupKDFParameters(passes: 1, memoryKiB: 8 * 1024))
    }
}
