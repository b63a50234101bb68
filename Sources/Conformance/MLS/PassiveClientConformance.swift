import MLS

/// mlswg `passive-client-*.json` (welcome, handling-commit, random): join from the Welcome
/// with the given keys (and the out-of-band ratchet tree and external PSKs when given), then
/// follow every epoch — its proposals, then its commit — comparing the epoch authenticator
/// after the join and after each commit.
enum PassiveClientConformance {
    static func run(_ cases: [[String: Any]], file: String) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: file) { vector, _, checker in
            guard case .keyPackage(let keyPackage) = try MLSMessage(tlsSerialized: try vector.bytes("key_package")).body else {
                throw ConformanceCaseError.malformed("key_package is not an MLSMessage(KeyPackage)")
            }
            guard case .welcome(let welcome) = try MLSMessage(tlsSerialized: try vector.bytes("welcome")).body else {
                throw ConformanceCaseError.malformed("welcome is not an MLSMessage(Welcome)")
            }
            let bundle = try KeyPackageBundle(
                keyPackage: keyPackage, initPrivateKey: try HPKEPrivateKey(Secret(try vector.bytes("init_priv"))),
                encryptionPrivateKey: try HPKEPrivateKey(Secret(try vector.bytes("encryption_priv"))),
                signer: try SignaturePrivateKey(seed: Secret(try vector.bytes("signature_priv"))))
            var psks: [[UInt8]: Secret] = [:]
            for entry in try vector.objects("external_psks") {
                psks[try entry.bytes("psk_id")] = Secret(try entry.bytes("psk"))
            }
            let tree = vector.has("ratchet_tree") ? try UnverifiedRatchetTree(tlsSerialized: try vector.bytes("ratchet_tree")) : nil
            var group = try MLSGroup.join(welcome: welcome, keyPackage: bundle, ratchetTree: tree, externalPSKs: psks)
            checker.expect(group.epochAuthenticator.constantTimeEquals(try vector.bytes("initial_epoch_authenticator")),
                           "initial_epoch_authenticator")
            // The vectors carry no clock: KeyPackages in Add proposals are checked at the
            // time our own KeyPackage was valid, the moment the scenario was generated.
            let time = keyPackageTime(keyPackage)
            for (n, epoch) in try vector.objects("epochs").enumerated() {
                for (p, proposal) in try epoch.array("proposals").enumerated() {
                    guard let hex = proposal as? String else { throw ConformanceCaseError.malformed("epochs[\(n)].proposals[\(p)]") }
                    _ = try group.process(try MLSMessage(tlsSerialized: try VectorFile.hex(hex, field: "proposals")), at: time)
                }
                _ = try group.process(try MLSMessage(tlsSerialized: try epoch.bytes("commit")), at: time)
                checker.expect(group.epochAuthenticator.constantTimeEquals(try epoch.bytes("epoch_authenticator")),
                               "epochs[\(n)].epoch_authenticator")
            }
        }
    }

    /// A time inside our KeyPackage's lifetime.
    static func keyPackageTime(_ keyPackage: KeyPackage) -> UInt64 {
        guard case .keyPackage(let lifetime) = keyPackage.leafNode.source else { return 0 }
        return lifetime.notBefore / 2 + lifetime.notAfter / 2
    }
}
