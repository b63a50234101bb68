import Foundation
@_spi(StoreAccess) import Node
import Nostr
import Pigeon
import Store

/// What a stranger's gift wrap costs the node that receives it (issue 19): the work `sync` and
/// `run` do per wrap — unwrap, refuse or step the DM engine, commit the outcome with the wrap's
/// processed mark in the SQLCipher store — for junk and for handshake1s from fresh keys, measured
/// past the strangers' budgets (their pending states, seen entries and outbox rows are full).
struct StrangerBench: BenchSection {
    let name = "strangers"
    let title = "Strangers: node work per junk gift wrap and per stranger handshake1"

    /// Wraps of each kind processed before the measured ones (fills the strangers' budgets).
    static let warmUp = 100
    static let measured = 400

    func run(_ context: BenchContext) throws -> SectionReport {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-strangers-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: home) }
        var rng = SystemRandomNumberGenerator()
        let node = try BurrowNode.initialize(home: home, passphrase: Array("bench".utf8), kdfMemoryMiB: StoreKDFParameters.minimumMemoryMiB,
                                             importing: nil)
        defer { node.close() }
        let card = try node.directMessages.localCardForBench()
        let total = Self.warmUp + Self.measured

        let junk = try (0..<total).map { i -> Event in
            let sender = Keys.generate(using: &rng)
            let rumor = try Rumor(pubkey: sender.publicKey, createdAt: Int64(Date().timeIntervalSince1970), kind: i % 2 == 0 ? 1590 : 14,
                                  tags: [], content: "junk \(i)")
            return try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: node.publicKey, now: Int64(Date().timeIntervalSince1970), rng: &rng)
        }
        // Enough handshake1s to fill the strangers' seen cache, then the measured ones at full.
        let fullCache = StrangerLimits.seenCapacity + Self.measured
        let handshakes = try (0..<fullCache).map { _ -> Event in
            let sender = Keys.generate(using: &rng)
            let identity = Ed25519PrivateKey.generate(), staticKey = X25519PrivateKey.generate()
            let own = try ContactCard.issue(identity: identity, staticKey: staticKey.publicKey, nostr: sender, auxRand: rng.bytes(32),
                                            createdAt: 1, nickname: "", relays: [])
            var state = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: own))
            state = try state.addContact(card).state
            var keys = SystemKeySource()
            let now = UInt64(Date().timeIntervalSince1970 * 1000)
            let frame = try state.start(with: card.identityKey, now: now, keys: &keys).output.frame
            let rumor = try NostrCarrier.rumor(frame: frame, sender: sender.publicKey, now: Int64(now / 1000))
            return try GiftWrap.wrap(rumor: rumor, sender: sender, recipient: node.publicKey, now: Int64(now / 1000), rng: &rng)
        }

        func microsecondsPerWrap(_ wraps: [Event]) -> Double {
            for wrap in wraps.prefix(Self.warmUp) { _ = node.processGiftWrapForBench(wrap) }
            let started = ContinuousClock.now
            for wrap in wraps.dropFirst(Self.warmUp) { _ = node.processGiftWrapForBench(wrap) }
            let elapsed = ContinuousClock.now - started
            return (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(Self.measured)
        }
        let junkCost = microsecondsPerWrap(junk)
        let handshakeCost = microsecondsPerWrap(Array(handshakes.prefix(total)))
        // Up to a full strangers' seen cache (4,096 entries), then 400 more measured.
        for wrap in handshakes.dropFirst(total).prefix(StrangerLimits.seenCapacity - total) { _ = node.processGiftWrapForBench(wrap) }
        let started = ContinuousClock.now
        for wrap in handshakes.suffix(Self.measured) { _ = node.processGiftWrapForBench(wrap) }
        let elapsed = ContinuousClock.now - started
        let fullCacheCost = (Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12) / Double(Self.measured)

        var table = MarkdownTable(headers: ["a stranger's gift wrap", "µs of node work per wrap", "wraps per second"], rightAligned: [1, 2])
        table.add(["junk (a rumor that is no frame, or of a kind nobody reads): unwrapped, refused, marked",
                   String(format: "%.0f", junkCost), Format.rate(1e6 / junkCost)])
        table.add(["handshake1 from a fresh key: unwrapped, answered (Noise XX responder), state and reply committed",
                   String(format: "%.0f", handshakeCost), Format.rate(1e6 / handshakeCost)])
        table.add(["the same with the strangers' seen cache full (4,096 entries; each handshake1 evicts one)",
                   String(format: "%.0f", fullCacheCost), Format.rate(1e6 / fullCacheCost)])
        var report = SectionReport(table: table)
        report.notes.append("\(Self.measured) wraps of each kind after \(Self.warmUp) that fill the strangers' budgets (64 pending states, "
                            + "64 outbox rows); wall time on one core, SQLCipher store on the bench directory's filesystem, no relay I/O. "
                            + "The seen cache is stored an entry per 10-byte record: a handshake1 writes its entry, the evicted one's deletion "
                            + "and the 25-byte floors record, where the single record of before was rewritten whole (40 bytes an entry, "
                            + "164 KB for the strangers' part alone, 820 KB with the contacts' part full).")
        return report
    }
}

private extension SystemRandomNumberGenerator {
    mutating func bytes(_ count: Int) -> [UInt8] { (0..<count).map { _ in UInt8.random(in: 0...255, using: &self) } }
}
