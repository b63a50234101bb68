import Foundation
import MLS

/// mlswg `tree-validation.json`: per-node tree hashes and resolutions of a ratchet tree, and
/// its full validation as a joiner performs it (parent hashes, leaf signatures with the group
/// id, unmerged leaves, key uniqueness).
enum TreeValidationConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "tree-validation") { v, _, _ in try check(v) }
    }

    static func check(_ v: VectorCase) throws {
        let suite = try CipherSuiteProvider(CipherSuite(try v.uint16("cipher_suite")))
        let unverified = try UnverifiedRatchetTree(tlsSerialized: try v.bytes("tree"))
        let tree = try RatchetTree(verifying: unverified, groupID: try v.bytes("group_id"), suite: suite)

        let hashes = try v.array("tree_hashes")
        guard hashes.count == tree.size.nodeCount else {
            throw ConformanceCaseError.mismatch("\(hashes.count) tree hashes for \(tree.size.nodeCount) nodes")
        }
        for (x, value) in hashes.enumerated() {
            guard let hex = value as? String else { throw ConformanceCaseError.malformed("tree_hashes[\(x)] is not hex") }
            guard tree.treeHash(of: NodeIndex(x)) == (try VectorFile.hex(hex, field: "tree_hashes[\(x)]")) else {
                throw ConformanceCaseError.mismatch("tree hash of node \(x)")
            }
        }

        let resolutions = try v.array("resolutions")
        guard resolutions.count == tree.size.nodeCount else {
            throw ConformanceCaseError.mismatch("\(resolutions.count) resolutions for \(tree.size.nodeCount) nodes")
        }
        for (x, value) in resolutions.enumerated() {
            guard let expected = (value as? [Any])?.compactMap({ ($0 as? NSNumber)?.intValue }),
                  expected.count == (value as? [Any])?.count
            else { throw ConformanceCaseError.malformed("resolutions[\(x)] is not a list of integers") }
            let got = tree.resolution(of: NodeIndex(x)).map(\.value)
            guard got == expected else { throw ConformanceCaseError.mismatch("resolution of node \(x): \(got) ≠ \(expected)") }
        }
    }
}
