import Foundation

/// One part of `make bench` (Nostr, MLS, Marmot, Pigeon, relay load). A section measures
/// Burrow and, where one exists, a third-party implementation in the same run, and reports a
/// markdown table. Add a section by conforming to this protocol and listing it in
/// `BenchSections.all`; `--only NAME` then selects it.
protocol BenchSection: Sendable {
    /// Short lowercase name used by `--only`.
    var name: String { get }
    var title: String { get }
    func run(_ context: BenchContext) throws -> SectionReport
}

enum BenchSections {
    static let all: [BenchSection] = [
        NostrBench(), MLSBench(), MarmotBench(), PigeonBench(), RelayLoadBench(), MeshBench(), StrangerBench(), LocationBench(), BackupBench(), FeedBench(),
    ]
}

/// What a section produced: a table, notes printed under it, and problems (a missing peer, a
/// goal not met) that also make the program exit non-zero.
struct SectionReport {
    var table: MarkdownTable
    var notes: [String] = []
    var problems: [String] = []
}

/// Settings shared by every section.
struct BenchContext {
    /// CPU seconds each measurement runs for (its wall time is bounded at twice that).
    var seconds: Double
    /// Whether to run third-party peers (the interop venv's Python).
    var includePeers: Bool
    var repositoryRoot: URL
    var python: URL

    /// The peer scripts shared with the interop tests.
    func peerScript(_ name: String) -> URL {
        repositoryRoot.appendingPathComponent("Tests/Interop/peers").appendingPathComponent(name)
    }

    /// Operations per CPU second of `body`, best of two half-length runs.
    func measure(_ body: () throws -> Void) rethrows -> Double {
        try Throughput.bestOfTwo(seconds: seconds, body)
    }

    /// Two operations measured in alternating short runs (a, b, a, b, …), for a ratio: each b
    /// run is compared with the a run just before it, so load elsewhere that comes and goes
    /// hits both sides of each comparison. Returns the best rate of each and the median of the
    /// per-round ratios b / a.
    func measurePair(
        rounds: Int = 6, _ a: () throws -> Void, _ b: () throws -> Void
    ) rethrows -> (a: Double, b: Double, ratio: Double) {
        var ratesA: [Double] = []
        var ratesB: [Double] = []
        var ratios: [Double] = []
        for _ in 0..<rounds {
            let rateA = try Throughput.measure(seconds: seconds / Double(rounds), a)
            let rateB = try Throughput.measure(seconds: seconds / Double(rounds), b)
            ratesA.append(rateA)
            ratesB.append(rateB)
            if rateA > 0 { ratios.append(rateB / rateA) }
        }
        ratios.sort()
        let median = ratios.isEmpty ? 0 : ratios.count % 2 == 1
            ? ratios[ratios.count / 2] : (ratios[ratios.count / 2 - 1] + ratios[ratios.count / 2]) / 2
        return (ratesA.max() ?? 0, ratesB.max() ?? 0, median)
    }
}

/// A GitHub-flavoured markdown table with right-aligned numeric columns.
struct MarkdownTable {
    var headers: [String]
    var rightAligned: Set<Int>
    var rows: [[String]] = []

    init(headers: [String], rightAligned: Set<Int>) {
        self.headers = headers
        self.rightAligned = rightAligned
    }

    mutating func add(_ row: [String]) { rows.append(row) }

    var markdown: String {
        let alignment = headers.indices.map { rightAligned.contains($0) ? "---:" : "---" }
        let lines = [headers, alignment] + rows
        return lines.map { "| " + $0.joined(separator: " | ") + " |" }.joined(separator: "\n")
    }
}

/// Number formatting for the tables.
enum Format {
    /// Operations per second with thousands separators, e.g. "23,456".
    static func rate(_ value: Double?) -> String {
        guard let value, value.isFinite else { return "—" }
        let rounded = Int(value.rounded())
        var digits = String(rounded)
        var groups: [String] = []
        while digits.count > 3 {
            groups.insert(String(digits.suffix(3)), at: 0)
            digits.removeLast(3)
        }
        groups.insert(digits, at: 0)
        return groups.joined(separator: ",")
    }

    static func ratio(_ numerator: Double?, _ denominator: Double?) -> String {
        guard let numerator, let denominator, denominator > 0 else { return "—" }
        return String(format: "%.2f×", numerator / denominator)
    }
}
