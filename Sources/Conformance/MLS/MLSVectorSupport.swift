import Foundation
import MLS

/// Field readers the crypto, key-schedule and secret-tree runners need beyond `VectorCase`'s.
extension VectorCase {
    func string(_ key: String) throws -> String {
        guard let s = object[key] as? String else { throw ConformanceCaseError.malformed("'\(key)' is not a string") }
        return s
    }

    func object(_ key: String) throws -> VectorCase {
        guard let o = object[key] as? [String: Any] else { throw ConformanceCaseError.malformed("'\(key)' is not an object") }
        return VectorCase(o)
    }

    func uint32(_ key: String) throws -> UInt32 {
        guard let v = UInt32(exactly: try int(key)) else { throw ConformanceCaseError.malformed("'\(key)' is not a uint32") }
        return v
    }

    func uint16(_ key: String) throws -> UInt16 {
        guard let v = UInt16(exactly: try int(key)) else { throw ConformanceCaseError.malformed("'\(key)' is not a uint16") }
        return v
    }

    /// An array of arrays of objects (secret-tree's `leaves`).
    func nestedObjects(_ key: String) throws -> [[VectorCase]] {
        try array(key).enumerated().map { i, inner in
            guard let items = inner as? [Any] else { throw ConformanceCaseError.malformed("'\(key)[\(i)]' is not an array") }
            return try items.map { element in
                guard let o = element as? [String: Any] else { throw ConformanceCaseError.malformed("'\(key)[\(i)]' holds a non-object") }
                return VectorCase(o)
            }
        }
    }
}

/// Collects the mismatches of one case, so a report line names every field that differed
/// (names only: many fields are secrets).
struct CaseChecker {
    private(set) var problems: [String] = []

    /// Runs one named step; a thrown error becomes a problem instead of ending the case.
    mutating func step(_ name: String, _ body: (inout CaseChecker) throws -> Void) {
        do { try body(&self) } catch let error as ConformanceCaseError { problems.append("\(name): \(error)") } catch {
            problems.append("\(name): \(error)")
        }
    }

    mutating func expect(_ condition: Bool, _ field: String) {
        if !condition { problems.append("\(field) differs from the vector") }
    }

    var result: Result<Void, Error> {
        problems.isEmpty ? .success(()) : .failure(ConformanceCaseError.mismatch(problems.joined(separator: "; ")))
    }
}

extension ConformanceReport {
    /// Runs `body` for every case of an mlswg file; cases whose `cipher_suite` is not one we
    /// run count as skipped, anything that throws counts as failed.
    static func forEachSuiteCase(_ cases: [[String: Any]], file: String,
                                 _ body: (VectorCase, CipherSuiteProvider, inout CaseChecker) throws -> Void) -> ConformanceReport {
        var report = ConformanceReport()
        for (index, object) in cases.enumerated() {
            let vector = VectorCase(object)
            let name = "\(file)[\(index)]"
            do {
                let suite = CipherSuite(try vector.uint16("cipher_suite"))
                guard suite.isSupported else {
                    report.skipped += 1
                    continue
                }
                var checker = CaseChecker()
                try body(vector, try CipherSuiteProvider(suite), &checker)
                report.record(name, checker.result)
            } catch {
                report.record(name, .failure(error))
            }
        }
        return report
    }
}
