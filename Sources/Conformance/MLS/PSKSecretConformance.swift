import MLS

/// mlswg `psk_secret.json`: `psk_secret` from a list of external PSKs (id, nonce, value).
enum PSKSecretConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "psk_secret") { vector, cs, checker in
            let psks = try vector.objects("psks").map { psk in
                PreSharedKeyInput(id: PreSharedKeyID(psk: .external(pskID: try psk.bytes("psk_id")), nonce: try psk.bytes("psk_nonce")),
                                  psk: Secret(try psk.bytes("psk")))
            }
            let secret = try KeySchedule.pskSecret(cs, psks: psks)
            checker.expect(secret.constantTimeEquals(try vector.bytes("psk_secret")), "psk_secret")
        }
    }
}
