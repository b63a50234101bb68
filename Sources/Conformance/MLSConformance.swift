import Foundation
import Nostr

/// `burrow conformance mls TEST FILE`: dispatches a published mlswg vector file to the runner for
/// its format (TEST is the file's name without `.json`, see Docs/cli.md).
public enum MLSConformance {
    /// The test names this build can run.
    public static let tests: [String] = [
        "tree-math",
        "tree-operations",
        "tree-validation",
        "treekem",
        "crypto-basics",
        "secret-tree",
        "key-schedule",
        "psk_secret",
        "hpke",
        "deserialization",
        "messages",
        "message-protection",
        "transcript-hashes",
        "welcome",
        "passive-client-welcome",
        "passive-client-handling-commit",
        "passive-client-random",
    ]

    public static func run(test: String, json: [UInt8]) -> ConformanceReport {
        let cases: [[String: Any]]
        do {
            cases = try VectorFile.cases(json)
        } catch {
            var report = ConformanceReport()
            report.record(test, .failure(error))
            return report
        }
        switch test {
        case "tree-math": return TreeMathConformance.run(cases)
        case "tree-operations": return TreeOperationsConformance.run(cases)
        case "tree-validation": return TreeValidationConformance.run(cases)
        case "treekem": return TreeKEMConformance.run(cases)
        case "crypto-basics": return CryptoBasicsConformance.run(cases)
        case "secret-tree": return SecretTreeConformance.run(cases)
        case "key-schedule": return KeyScheduleConformance.run(cases)
        case "psk_secret": return PSKSecretConformance.run(cases)
        // RFC 9180's test-vectors.json format (not an mlswg file): base-mode X25519/SHA-256/AES-128-GCM.
        case "hpke": return HPKEConformance.run(cases)
        case "deserialization": return DeserializationConformance.run(cases)
        case "messages": return MessagesConformance.run(cases)
        case "message-protection": return MessageProtectionConformance.run(cases)
        case "transcript-hashes": return TranscriptHashesConformance.run(cases)
        case "welcome": return WelcomeConformance.run(cases)
        // Every passive-client-*.json shares one format.
        case let name where name.hasPrefix("passive-client"): return PassiveClientConformance.run(cases, file: name)
        default:
            var report = ConformanceReport()
            report.record(test, .failure(ConformanceCaseError.unsupported("no MLS runner for '\(test)'")))
            return report
        }
    }
}

/// Why one vector case failed; never carries secret values, only names and public data.
enum ConformanceCaseError: Error, CustomStringConvertible {
    /// The vector itself is not of the documented format.
    case malformed(String)
    /// Our computation disagrees with the vector.
    case mismatch(String)
    /// The case needs something this runner does not do.
    case unsupported(String)

    var description: String {
        switch self {
        case .malformed(let s): return "malformed vector: \(s)"
        case .mismatch(let s): return "mismatch: \(s)"
        case .unsupported(let s): return "unsupported: \(s)"
        }
    }
}

/// Typed access to the JSON objects of an mlswg vector file.
enum VectorFile {
    /// The top-level array of case objects.
    static func cases(_ json: [UInt8]) throws -> [[String: Any]] {
        let value: Any
        do {
            value = try JSONSerialization.jsonObject(with: Data(json), options: [.fragmentsAllowed])
        } catch {
            throw ConformanceCaseError.malformed("not JSON")
        }
        guard let array = value as? [Any] else { throw ConformanceCaseError.malformed("top level is not an array") }
        return try array.enumerated().map { i, element in
            guard let object = element as? [String: Any] else { throw ConformanceCaseError.malformed("case \(i) is not an object") }
            return object
        }
    }
}

/// Field readers for one case object.
struct VectorCase {
    let object: [String: Any]

    init(_ object: [String: Any]) { self.object = object }

    func has(_ key: String) -> Bool { object[key] != nil && !(object[key] is NSNull) }

    func int(_ key: String) throws -> Int {
        guard let n = object[key] as? NSNumber, let v = Int(exactly: n.doubleValue) else {
            throw ConformanceCaseError.malformed("'\(key)' is not an integer")
        }
        return v
    }

    func uint64(_ key: String) throws -> UInt64 {
        guard let n = object[key] as? NSNumber else { throw ConformanceCaseError.malformed("'\(key)' is not an integer") }
        return n.uint64Value
    }

    func optionalInts(_ key: String) throws -> [Int?] {
        guard let array = object[key] as? [Any] else { throw ConformanceCaseError.malformed("'\(key)' is not an array") }
        return try array.map { element in
            if element is NSNull { return nil }
            guard let n = element as? NSNumber, let v = Int(exactly: n.doubleValue) else {
                throw ConformanceCaseError.malformed("'\(key)' holds a non-integer")
            }
            return v
        }
    }

    func bytes(_ key: String) throws -> [UInt8] {
        guard let s = object[key] as? String else { throw ConformanceCaseError.malformed("'\(key)' is not a hex string") }
        return try VectorFile.hex(s, field: key)
    }

    func array(_ key: String) throws -> [Any] {
        guard let a = object[key] as? [Any] else { throw ConformanceCaseError.malformed("'\(key)' is not an array") }
        return a
    }

    func objects(_ key: String) throws -> [VectorCase] {
        try array(key).map { element in
            guard let o = element as? [String: Any] else { throw ConformanceCaseError.malformed("'\(key)' holds a non-object") }
            return VectorCase(o)
        }
    }
}

extension VectorFile {
    static func hex(_ s: String, field: String) throws -> [UInt8] {
        do {
            return try Hex.decode(s)
        } catch {
            throw ConformanceCaseError.malformed("'\(field)' is not hex")
        }
    }
}
