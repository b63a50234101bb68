import Foundation
import MLS
import Marmot
import Node
import Nostr

/// Burrow's Marmot group operations beside MDK 0.8.0's (mdk-python, `Tests/Interop/peers/bench_mdk.py`),
/// both with their durable SQLCipher stores, in wall-clock milliseconds (a store write waits
/// for the disk, which CPU time would not count). No relays on either side: MDK never talks to
/// them, so events move between the two members of each side as JSON strings.
///
/// For each group size N every round builds a fresh group (creation cannot repeat, and an add
/// commit changes the group), has one invitee join by its Welcome (not measured), exchanges chat
/// messages from the creator to that member in the group of N, then the creator adds one member
/// and the member processes that commit. Both sides run the same rounds with the same shapes.
struct MarmotBench: BenchSection {
    let name = "marmot"
    let title = "Marmot: Burrow beside MDK 0.8.0, both with their SQLCipher stores"

    static let sizes = [2, 10, 50]
    static let messagesPerRound = 5
    static let messageBytes = 100
    /// Burrow ÷ MDK wall time: Burrow should take at most half MDK's time.
    static let ratioGoal = 0.5
    static let relays = ["wss://relay.example.com"]

    /// Rounds per size at `--seconds 1`: the large groups' rounds cost the most.
    static func rounds(for size: Int, seconds: Double) -> Int {
        let base = size >= 50 ? 10.0 : size >= 10 ? 20.0 : 30.0
        return max(3, Int((base * seconds).rounded()))
    }

    /// Chat text of `messageBytes` bytes, distinct per message (as the peer script's).
    static func messageText(_ index: Int) -> String {
        let head = "bench message \(index) "
        return head + String(repeating: "x", count: max(0, messageBytes - head.utf8.count))
    }

    /// The timed operations, keyed as in the peer's JSON; `create_wrapped` is Burrow's alone.
    struct Samples {
        var values: [String: [Double]] = [:]
        mutating func add(_ key: String, _ milliseconds: Double) { values[key, default: []].append(milliseconds) }
        func median(_ key: String) -> Double? { MarmotBench.median(values[key] ?? []) }

        /// Each message's send plus its receipt (the two lists are in message order).
        var roundTrips: [Double] { zip(values["send"] ?? [], values["receive"] ?? []).map { $0 + $1 } }
    }

    /// One side's figures: timings on the bench directory's disk and on tmpfs, and
    /// fsync/fdatasync calls per operation.
    struct Side {
        var disk: [Int: Samples] = [:]
        var tmpfs: [Int: Samples] = [:]
        var syncs: [String: Double]?
        var journal = "unknown"
    }

    func run(_ context: BenchContext) throws -> SectionReport {
        var report = SectionReport(table: MarkdownTable(headers: [], rightAligned: []))
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("burrow-bench-marmot-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let tmpfs = DurabilityProbe.tmpfsDirectory()
        if let tmpfs { try FileManager.default.createDirectory(at: tmpfs, withIntermediateDirectories: true) }
        defer { if let tmpfs { try? FileManager.default.removeItem(at: tmpfs) } }
        let rounds = Self.sizes.map { Self.rounds(for: $0, seconds: context.seconds) }

        // The peer runs first and alone, so the two never compete for the cores or the disk.
        var mdk = Side()
        var peerName = "MDK"
        if context.includePeers {
            do {
                func runPeer(_ dir: URL) throws -> [String: Any] {
                    try PythonBench.run(python: context.python, script: context.peerScript("bench_mdk.py"),
                                        arguments: Self.peerArguments(dir, rounds: rounds), timeout: 900)
                }
                let output = try runPeer(directory.appendingPathComponent("mdk"))
                if let version = output["version"] as? String { peerName = "MDK \(version)" }
                mdk.journal = output["journal"] as? String ?? "unknown"
                mdk.disk = Self.samples(output)
                if let tmpfs { mdk.tmpfs = Self.samples(try runPeer(tmpfs.appendingPathComponent("mdk"))) }
                mdk.syncs = try DurabilityProbe.countSyncs(
                    executable: context.python.path,
                    arguments: [context.peerScript("bench_mdk.py").path, "--markers"]
                        + Self.peerArguments(directory.appendingPathComponent("mdk-syncs"), rounds: Self.sizes.map { _ in 2 }),
                    timeout: 900)
                if mdk.disk.isEmpty { report.problems.append("the MDK bench printed no figures") }
            } catch {
                report.problems.append("MDK not measured: \(error)")
            }
        } else {
            report.notes.append("MDK not run (--no-peers).")
        }

        var burrow = Side()
        for (size, count) in zip(Self.sizes, rounds) {
            let measured = try measureBurrow(size: size, rounds: count, directory: directory.appendingPathComponent("burrow-n\(size)"))
            burrow.disk[size] = measured.samples
            burrow.journal = measured.journal
            if let tmpfs {
                burrow.tmpfs[size] = try measureBurrow(size: size, rounds: count, directory: tmpfs.appendingPathComponent("burrow-n\(size)")).samples
            }
        }
        burrow.syncs = try DurabilityProbe.countSyncs(
            executable: CommandLine.arguments[0], arguments: ["--marmot-sync-pass", directory.appendingPathComponent("burrow-syncs").path],
            timeout: 600)

        var table = MarkdownTable(
            headers: ["operation", "N", "Burrow (ms)", "\(peerName) (ms)", "Burrow ÷ MDK", "goal ≤ \(Self.ratioGoal)",
                      "Burrow tmpfs (ms)", "MDK tmpfs (ms)", "fsyncs/op Burrow", "fsyncs/op MDK"],
            rightAligned: [1, 2, 3, 4, 6, 7, 8, 9])
        let rows: [(String, [String], (Samples) -> Double?)] = [
            ("create a group of N (KeyPackage events verified, group stored)", ["create"], { $0.median("create") }),
            ("create, the first in a fresh store and process (cold)", ["create"], { $0.values["create"]?.first }),
            ("add-member commit (commit, store pending, merge, store)", ["add_commit"], { $0.median("add_commit") }),
            ("process the add commit (another member)", ["process_commit"], { $0.median("process_commit") }),
            ("send + receive a chat message (\(Self.messageBytes) B)", ["send", "receive"], { Self.median($0.roundTrips) }),
        ]
        var missed: [String] = []
        for (label, operations, figure) in rows {
            for size in Self.sizes {
                let ours = burrow.disk[size].flatMap(figure)
                let theirs = mdk.disk[size].flatMap(figure)
                var verdict = "—"
                if let ours, let theirs, theirs > 0, !label.contains("cold") {
                    let met = ours / theirs <= Self.ratioGoal
                    verdict = met ? "met" : "**not met**"
                    if !met { missed.append("\(label), N = \(size)") }
                }
                table.add([size == Self.sizes.first ? label : "", "\(size)", Self.milliseconds(ours), Self.milliseconds(theirs),
                           Format.ratio(ours, theirs), verdict,
                           Self.milliseconds(burrow.tmpfs[size].flatMap(figure)), Self.milliseconds(mdk.tmpfs[size].flatMap(figure)),
                           size == Self.sizes.first ? Self.syncs(burrow.syncs, operations) : "",
                           size == Self.sizes.first ? Self.syncs(mdk.syncs, operations) : ""])
            }
        }
        for size in Self.sizes {
            table.add([size == Self.sizes.first ? "create a group of N and gift-wrap its N − 1 Welcomes (Burrow only)" : "", "\(size)",
                       Self.milliseconds(burrow.disk[size]?.median("create_wrapped")), "—", "—", "—",
                       Self.milliseconds(burrow.tmpfs[size]?.median("create_wrapped")), "—",
                       size == Self.sizes.first ? Self.syncs(burrow.syncs, ["create_wrapped"]) : "", "—"])
        }
        report.table = table

        let roundsText = zip(Self.sizes, rounds).map { "\($1) (N = \($0))" }.joined(separator: ", ")
        let filesystem = DurabilityProbe.filesystem(of: directory.path)
        report.notes.append(
            "Wall-clock milliseconds per operation, medians over \(roundsText) rounds, each on a fresh group, and "
                + "\(Self.messagesPerRound) messages per round; MDK ran first, alone, then Burrow. Each side has two members with their "
                + "own SQLCipher databases on the same disk (MDK: `new_mdk_with_key`; Burrow: `BurrowStore`), and every figure "
                + "includes that side's durable writes. The bench directory \(directory.deletingLastPathComponent().path) is on "
                + "**\(filesystem)**; the tmpfs columns repeat the same rounds with both stores in /dev/shm (no disk: the engines' "
                + "cost alone)\(tmpfs == nil ? " — not run here, /dev/shm is not tmpfs" : ""). Journal modes: Burrow "
                + "\(burrow.journal); MDK \(mdk.journal == "wal" ? "WAL (a -wal file stood beside its databases)" : mdk.journal == "rollback" ? "rollback journal (no -wal file beside its databases)" : mdk.journal). "
                + "MDK's figures time only its calls "
                + "(`create_group`, `add_members` + `merge_pending_commit`, `process_message`, `create_message`) from Python "
                + "through UniFFI. Burrow's run the node's own code without relays (`BurrowNode.stageMessage`, `stageCommit` + "
                + "`confirmCommit`, `receiveGroupEvents`: what `chat`, `group add` and `sync` do before and after publishing): "
                + "KeyPackage events and received group events start as JSON (id and signature verified, as from a relay); every "
                + "operation loads the group row, decodes it, changes it and stores it back; the add commit is stored pending with "
                + "its gift-wrapped welcome, dedup mark and outbox entries, then merged in a second transaction; a received event's "
                + "group, message and dedup mark commit together. "
                + "The cold row is each size's first creation, in a store just created (N = 2: also the process's first).")
        report.notes.append(
            "fsyncs/op: fsync + fdatasync system calls per operation (send + receive together), counted by `strace -f` over a "
            + "separate pass of 2 rounds per size in which each timed call is bracketed by a marker write (to file descriptor -1, "
            + "which fails and does nothing); \(burrow.syncs == nil ? "not counted here (strace not installed). " : "")"
            + "the timings above ran without strace.")
        report.notes.append(
            "Not gift-wrapped, as MDK returns bare Welcome rumors: the compared creation (Burrow's add commit wraps its one welcome, "
            + "as the node does). The last rows add the "
            + "NIP-59 wraps and their outbox rows (one transaction with the group, as the node stores them). Groups stop at 50: "
            + "from about 57 members a one-shot creation's Welcome overflows LocalRelay's 64 KiB event cap, and from about 82 no "
            + "gift wrap can carry it.")
        if let splits = splitNote(burrow: burrow.disk, mdk: mdk.disk) { report.notes.append(splits) }
        if !mdk.disk.isEmpty {
            report.notes.append(missed.isEmpty
                ? "Goal (Burrow at most \(Self.ratioGoal)× MDK's time): met everywhere."
                : "Goal (Burrow at most \(Self.ratioGoal)× MDK's time) **not met** for: " + missed.joined(separator: "; ") + ".")
        }
        return report
    }

    static func peerArguments(_ dir: URL, rounds: [Int]) -> [String] {
        ["--dir", dir.path, "--sizes", sizes.map(String.init).joined(separator: ","),
         "--rounds", rounds.map(String.init).joined(separator: ","),
         "--messages", String(messagesPerRound), "--message-bytes", String(messageBytes)]
    }

    static func samples(_ output: [String: Any]) -> [Int: Samples] {
        var result: [Int: Samples] = [:]
        for (size, value) in output["sizes"] as? [String: Any] ?? [:] {
            guard let n = Int(size), let ops = value as? [String: Any] else { continue }
            var samples = Samples()
            for (key, list) in ops { samples.values[key] = (list as? [Any] ?? []).compactMap { ($0 as? NSNumber)?.doubleValue } }
            result[n] = samples
        }
        return result
    }

    static func syncs(_ counts: [String: Double]?, _ operations: [String]) -> String {
        guard let counts else { return "—" }
        let values = operations.compactMap { counts[$0] }
        guard values.count == operations.count else { return "—" }
        let total = values.reduce(0, +)
        return total == total.rounded() ? String(Int(total)) : String(format: "%.1f", total)
    }

    /// The counting pass run under strace (`burrow-bench --marmot-sync-pass DIR`): two rounds
    /// per size, markers on.
    static func syncPass(directory: URL) throws {
        for size in sizes {
            _ = try MarmotBench().measureBurrow(size: size, rounds: 2, directory: directory.appendingPathComponent("n\(size)"))
        }
        try? FileManager.default.removeItem(at: directory)
    }

    /// Send and receive apart, per size.
    private func splitNote(burrow: [Int: Samples], mdk: [Int: Samples]) -> String? {
        let parts = Self.sizes.compactMap { size -> String? in
            guard let ours = burrow[size] else { return nil }
            let theirs = mdk[size]
            return "N = \(size): send \(Self.milliseconds(ours.median("send"))) vs \(Self.milliseconds(theirs?.median("send"))), "
                + "receive \(Self.milliseconds(ours.median("receive"))) vs \(Self.milliseconds(theirs?.median("receive")))"
        }
        return parts.isEmpty ? nil : "Messages apart (Burrow vs MDK, ms): " + parts.joined(separator: "; ") + "."
    }

    // MARK: Burrow

    func measureBurrow(size: Int, rounds: Int, directory: URL) throws -> (samples: Samples, journal: String) {
        var rng = SystemRandomNumberGenerator()
        let relays = try Self.relays.map(RelayURL.init)
        let creator = try MarmotBenchParty(home: directory.appendingPathComponent("creator"), using: &rng)
        let member = try MarmotBenchParty(home: directory.appendingPathComponent("member"), using: &rng)
        defer {
            creator.close()
            member.close()
        }
        var samples = Samples()
        func timed<T>(_ key: String, _ body: () throws -> T) rethrows -> T {
            DurabilityProbe.mark("begin " + key)
            let start = Throughput.wallTime()
            let value = try body()
            samples.add(key, (Throughput.wallTime() - start) * 1000)
            DurabilityProbe.mark("end " + key)
            return value
        }

        for _ in 0..<rounds {
            // Not measured: every KeyPackage event of the round, signed by its owner.
            let now = Int64(Date().timeIntervalSince1970)
            let memberBundle = try MarmotProfile.keyPackage(for: member.publicKey, now: now, using: &rng)
            let memberEvent = try Self.keyPackageEvent(memberBundle, keys: member.keys, relays: relays, now: now, using: &rng)
            var invitees = [memberEvent.jsonString]
            for _ in 0..<(size - 2) {
                let keys = Keys.generate(using: &rng)
                let bundle = try MarmotProfile.keyPackage(for: keys.publicKey, now: now, using: &rng)
                invitees.append(try Self.keyPackageEvent(bundle, keys: keys, relays: relays, now: now, using: &rng).jsonString)
            }
            let newcomerKeys = Keys.generate(using: &rng)
            let newcomer = try Self.keyPackageEvent(
                MarmotProfile.keyPackage(for: newcomerKeys.publicKey, now: now, using: &rng), keys: newcomerKeys, relays: relays,
                now: now, using: &rng).jsonString

            // The plain creation comes first, so the first round's is the first in the fresh store
            // (the cold figure); the creation with its wraps makes a group of its own, and the
            // round goes on in the one without.
            let (group, welcomes) = try timed("create") {
                try creator.createGroup(keyPackageJSON: invitees, relays: relays, wrap: false, now: now, using: &rng)
            }
            _ = try timed("create_wrapped") {
                try creator.createGroup(keyPackageJSON: invitees, relays: relays, wrap: true, now: now, using: &rng)
            }
            guard welcomes.count == size - 1, let welcome = welcomes.first(where: { $0.recipient == member.publicKey }) else {
                throw BenchFailure.check("creation made \(welcomes.count) welcomes for \(size - 1) invitees")
            }
            let joined = try member.join(welcome, keyPackage: memberBundle, now: now)
            guard joined.members.count == size, joined.epoch == group.epoch else { throw BenchFailure.check("the member did not join") }
            let id = group.mlsGroupID

            for index in 0..<Self.messagesPerRound {
                let text = Self.messageText(index)
                let event = try timed("send") { try creator.sendChat(text, in: id) }
                let report = try timed("receive") { try member.receive(event.jsonString) }
                guard report.messages == 1, case .message(let message)? = report.updates.first,
                      message.text == text, message.sender == creator.publicKey.hex else {
                    throw BenchFailure.check("the member did not read the message")
                }
            }

            let commit = try timed("add_commit") { try creator.addMember(newcomer, to: id, now: now) }
            let report = try timed("process_commit") { try member.receive(commit.jsonString) }
            guard report.updates.contains(where: { if case .group = $0 { return true } else { return false } }) else {
                throw BenchFailure.check("the member did not apply the add commit")
            }
            let states = try [creator, member].map { party in try party.store.transaction { try LoadedGroup.load(id, $0).group } }
            guard states.allSatisfy({ $0.members.count == size + 1 }), states[0].epoch == states[1].epoch,
                  states[0].mls.epochAuthenticator == states[1].mls.epochAuthenticator
            else { throw BenchFailure.check("creator and member disagree after the add (N = \(size))") }
        }
        let durability = try creator.store.durability()
        let synchronous = ["OFF", "NORMAL", "FULL", "EXTRA"].indices.contains(durability.synchronous)
            ? ["OFF", "NORMAL", "FULL", "EXTRA"][durability.synchronous] : "\(durability.synchronous)"
        return (samples, "\(durability.journalMode.uppercased()) with synchronous = \(synchronous)")
    }

    private static func keyPackageEvent(_ bundle: KeyPackageBundle, keys: Keys, relays: [RelayURL], now: Int64,
                                        using rng: inout SystemRandomNumberGenerator) throws -> Event {
        try KeyPackageEventContent(keyPackage: bundle.keyPackage, relays: relays, using: &rng)
            .sign(keys: keys, createdAt: now, rng: &rng).event
    }

    // MARK: Figures

    static func median(_ values: [Double]) -> Double? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let middle = sorted.count / 2
        return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
    }

    static func milliseconds(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        return value >= 100 ? String(format: "%.0f", value) : value >= 10 ? String(format: "%.1f", value) : String(format: "%.2f", value)
    }
}
