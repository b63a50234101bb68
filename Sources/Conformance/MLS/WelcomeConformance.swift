import MLS

/// mlswg `welcome.json`: decrypt the Welcome with the KeyPackage's init key, check the
/// GroupInfo signature under `signer_pub`, and check its confirmation tag with the
/// confirmation key the joiner secret leads to (the vectors carry no ratchet tree).
enum WelcomeConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "welcome") { vector, _, _ in
            guard case .keyPackage(let keyPackage) = try MLSMessage(tlsSerialized: try vector.bytes("key_package")).body else {
                throw ConformanceCaseError.malformed("key_package is not an MLSMessage(KeyPackage)")
            }
            guard case .welcome(let welcome) = try MLSMessage(tlsSerialized: try vector.bytes("welcome")).body else {
                throw ConformanceCaseError.malformed("welcome is not an MLSMessage(Welcome)")
            }
            let processed = try ProcessedWelcome(welcome: welcome, keyPackage: keyPackage,
                                                 initPrivateKey: try HPKEPrivateKey(Secret(try vector.bytes("init_priv"))))
            try processed.verifyGroupInfoSignature(signerKey: try vector.bytes("signer_pub"))
            _ = try processed.verifiedEpochSecrets()
        }
    }
}
