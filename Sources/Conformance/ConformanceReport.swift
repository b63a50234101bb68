/// The outcome of running one vector file: the CLI prints `summaryLine` last.
public struct ConformanceReport: Sendable, Equatable {
    public var passed = 0
    public var failed = 0
    public var skipped = 0
    /// One line per failed case, naming the case and what differed (never secret values).
    public var failures: [String] = []

    public init() {}

    public mutating func record(_ caseName: String, _ result: Result<Void, Error>) {
        switch result {
        case .success: passed += 1
        case .failure(let error):
            failed += 1
            failures.append("\(caseName): \(error)")
        }
    }

    /// A run proves something only if a case passed and none failed: a file with no case
    /// (empty, the wrong file, every case skipped) is a failure too.
    public var succeeded: Bool { failed == 0 && passed > 0 }

    public var summaryLine: String {
        skipped > 0 ? "\(passed) passed, \(failed) failed, \(skipped) skipped" : "\(passed) passed, \(failed) failed"
    }
}
