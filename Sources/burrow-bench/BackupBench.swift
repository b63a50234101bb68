import Backup
import CSodium
import Foundation
import MLS
import Marmot
@_spi(StoreAccess) import Node
import Nostr
import Store

/// Backups (issue 25): creating and restoring a backup of a node with 10,000 group messages,
/// beside the Argon2id runs alone, and the file's size per message. Everything runs as the CLI
/// runs it, in process: `backup create` reads the rows, encodes, seals (one Argon2id), then
/// opens the sealed bytes again to compare (a second); `backup restore` opens (one), decodes,
/// creates the store (the store's own Argon2id) and writes every row in one transaction.
struct BackupBench: BenchSection {
    let name = "backup"
    let title = "Backups: create and restore with 10,000 messages, beside the Argon2id cost"
    static let messages = 10_000

    func run(_ context: BenchContext) throws -> SectionReport {
        var table = MarkdownTable(headers: ["step", "total ms", "Argon2id runs", "Argon2id ms", "the rest ms"], rightAligned: [1, 2, 3, 4])
        var report = SectionReport(table: table)
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-backup-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }

        var rng = SystemRandomNumberGenerator()
        let passphrase = Array("bench passphrase".utf8)
        let node = try BurrowNode.initialize(home: root.appendingPathComponent("a"), passphrase: passphrase, kdfMemoryMiB: 64, importing: nil)
        defer { node.close() }
        let now = Int64(Date().timeIntervalSince1970)
        let (group, _) = try MarmotGroup.create(creator: node.publicKey, name: "Family", description: "", admins: [node.publicKey],
                                                relays: [try RelayURL("ws://127.0.0.1:7447")], invitees: [], now: now, using: &rng)
        var record = LoadedGroup(new: group, now: now, syncSince: now)
        try node.store.transaction { tx in
            try record.save(tx)
            for n in 0..<Self.messages {
                let text = "message \(n): on our way home, see you at dinner"
                let id = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
                let rumor = #"{"id":"\#(Hex.encode(id))","pubkey":"\#(node.publicKey.hex)","created_at":\#(now + Int64(n)),"kind":9,"tags":[],"content":"\#(text)"}"#
                _ = try tx.messages.insert(StoredMessage(
                    mlsGroupID: group.mlsGroupID.bytes, id: id, eventID: (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) },
                    sender: node.publicKey.bytes, kind: 9, createdAt: now + Int64(n), content: text, rumorJSON: rumor, epoch: 0,
                    receivedAt: now + Int64(n), generation: Int64(n)))
            }
        }

        // Argon2id alone, at the backup's default parameters and at the store's.
        func argon2(memoryKiB: Int, passes: UInt64) -> Double {
            var out = [UInt8](repeating: 0, count: 32)
            let salt = [UInt8](repeating: 7, count: 16)
            let start = ContinuousClock.now
            _ = crypto_pwhash(&out, 32, "bench", 5, salt, passes, memoryKiB * 1024, crypto_pwhash_ALG_ARGON2ID13)
            return milliseconds(ContinuousClock.now - start)
        }
        let backupKDF = BackupKDFParameters.default
        let argonBackup = (0..<3).map { _ in argon2(memoryKiB: Int(backupKDF.memoryKiB), passes: UInt64(backupKDF.passes)) }.min() ?? 0
        let argonStore = (0..<3).map { _ in argon2(memoryKiB: 64 * 1024, passes: 3) }.min() ?? 0
        table.add(["Argon2id alone (64 MiB, 3 passes)", format(argonBackup), "1", format(argonBackup), "–"])

        // Create: read, encode, seal, open again and compare.
        var sealed: [UInt8] = []
        let create = try best(of: 2) {
            let bytes = try node.backupContent(parts: Set(BackupContent.Part.allCases)).encoded()
            sealed = try BackupFile.seal(bytes, passphrase: passphrase, kdf: backupKDF)
            guard try BackupFile.open(sealed, passphrase: passphrase) == bytes else { throw BenchFailure.check("the backup read back differs") }
        }
        table.add(["`backup create` (\(Self.messages) messages)", format(create), "2", format(2 * argonBackup), format(create - 2 * argonBackup)])

        // Restore: open, decode, create the store, write every row.
        var restoredCount = 0
        let restore = try best(of: 2) {
            let home = root.appendingPathComponent("b-\(UUID().uuidString.prefix(6))")
            let content = try BackupContent.decode(try BackupFile.open(sealed, passphrase: passphrase))
            let (restored, _) = try BurrowNode.restore(content, home: home, passphrase: passphrase, kdfMemoryMiB: 64)
            restoredCount = try restored.store.transaction { try $0.messages.count() }
            restored.close()
        }
        guard restoredCount == Self.messages else { throw BenchFailure.check("restored \(restoredCount) messages") }
        table.add(["`backup restore` (\(Self.messages) messages)", format(restore), "2", format(argonBackup + argonStore),
                   format(restore - argonBackup - argonStore)])
        report.table = table
        let perMessage = Double(sealed.count) / Double(Self.messages)
        report.notes = [
            "One node with one group and \(Self.messages) chat messages (about 50 characters each, with their rumor JSON). "
                + "The file is \(sealed.count / 1024) KiB: \(String(format: "%.0f", perMessage)) bytes per message. "
                + "Times are the best of two runs, in process, as the commands run them; the rest = total − the Argon2id runs "
                + "measured alone (the backup's 64 MiB × 3 and, for a restore, the new store's 64 MiB × 3). Goal: the rest under 1 s.",
        ]
        if create - 2 * argonBackup > 1000 { report.problems.append("backup create: the rest took over 1 s") }
        if restore - argonBackup - argonStore > 1000 { report.problems.append("backup restore: the rest took over 1 s") }
        return report
    }

    private func best(of runs: Int, _ body: () throws -> Void) throws -> Double {
        var times: [Double] = []
        for _ in 0..<runs {
            let start = ContinuousClock.now
            try body()
            times.append(milliseconds(ContinuousClock.now - start))
        }
        return times.min() ?? 0
    }

    private func milliseconds(_ d: Duration) -> Double {
        Double(d.components.seconds) * 1000 + Double(d.components.attoseconds) / 1e15
    }

    private func format(_ ms: Double) -> String { String(format: "%.0f", ms) }
}
