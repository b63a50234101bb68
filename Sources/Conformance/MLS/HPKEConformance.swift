@_spi(Testing) import MLS

/// RFC 9180 test vectors (the CFRG `test-vectors.json` format). Base-mode entries of
/// DHKEM(X25519, HKDF-SHA256)/HKDF-SHA256/AES-128-GCM are run: key derivation, encapsulation,
/// the key schedule, every encryption (sealed by our sender, opened by our recipient) and every
/// export. Entries of other modes or algorithms count as skipped.
enum HPKEConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        var report = ConformanceReport()
        let suite = HPKESuite.x25519SHA256AES128GCM
        for (index, object) in cases.enumerated() {
            let entry = VectorCase(object)
            let name = "hpke[\(index)]"
            do {
                let ids = (try entry.int("mode"), try entry.int("kem_id"), try entry.int("kdf_id"), try entry.int("aead_id"))
                guard ids == (Int(HPKESuite.modeBase), Int(suite.kemID), Int(suite.kdfID), Int(suite.aeadID)) else {
                    report.skipped += 1
                    continue
                }
                var checker = CaseChecker()
                try check(entry, suite: suite, &checker)
                report.record(name, checker.result)
            } catch {
                report.record(name, .failure(error))
            }
        }
        return report
    }

    private static func check(_ entry: VectorCase, suite: HPKESuite, _ checker: inout CaseChecker) throws {
        let info = try entry.bytes("info")
        let receiver = try suite.deriveKeyPair(ikm: Secret(try entry.bytes("ikmR")))
        let ephemeral = try suite.deriveKeyPair(ikm: Secret(try entry.bytes("ikmE")))
        checker.expect(receiver.privateKey.secret.constantTimeEquals(try entry.bytes("skRm")), "skRm")
        checker.expect(receiver.publicKey.bytes == (try entry.bytes("pkRm")), "pkRm")
        checker.expect(ephemeral.privateKey.secret.constantTimeEquals(try entry.bytes("skEm")), "skEm")
        checker.expect(ephemeral.publicKey.bytes == (try entry.bytes("pkEm")), "pkEm")

        let (sharedSecret, enc) = try suite.encap(recipient: receiver.publicKey, ephemeral: ephemeral)
        checker.expect(enc == (try entry.bytes("enc")), "enc")
        checker.expect(sharedSecret.constantTimeEquals(try entry.bytes("shared_secret")), "shared_secret (Encap)")
        let decapped = try suite.decap(enc: try entry.bytes("enc"), recipient: receiver.privateKey)
        checker.expect(decapped.constantTimeEquals(try entry.bytes("shared_secret")), "shared_secret (Decap)")

        var (_, sender) = try suite.setupBaseSender(recipient: receiver.publicKey, info: info, ephemeral: ephemeral)
        var recipient = try suite.setupBaseRecipient(enc: try entry.bytes("enc"), recipient: receiver.privateKey, info: info)
        for (role, context) in [("sender", sender), ("recipient", recipient)] {
            checker.expect(context.keyScheduleContext == (try entry.bytes("key_schedule_context")), "key_schedule_context (\(role))")
            checker.expect(context.secret.constantTimeEquals(try entry.bytes("secret")), "secret (\(role))")
            checker.expect(context.key.constantTimeEquals(try entry.bytes("key")), "key (\(role))")
            checker.expect(context.baseNonce.constantTimeEquals(try entry.bytes("base_nonce")), "base_nonce (\(role))")
            checker.expect(context.exporterSecret.constantTimeEquals(try entry.bytes("exporter_secret")), "exporter_secret (\(role))")
        }

        for (i, encryption) in try entry.objects("encryptions").enumerated() {
            let (aad, pt, ct) = (try encryption.bytes("aad"), try encryption.bytes("pt"), try encryption.bytes("ct"))
            checker.expect(sender.nonce(sequence: sender.sequenceNumber).constantTimeEquals(try encryption.bytes("nonce")), "encryptions[\(i)].nonce")
            checker.step("encryptions[\(i)] seal") { checker in checker.expect(try sender.seal(aad: aad, plaintext: pt) == ct, "encryptions[\(i)].ct") }
            checker.step("encryptions[\(i)] open") { checker in checker.expect(try recipient.open(aad: aad, ciphertext: ct) == pt, "encryptions[\(i)].pt") }
        }
        for (i, export) in try entry.objects("exports").enumerated() {
            let context = try export.bytes("exporter_context")
            let length = try export.int("L")
            let expected = try export.bytes("exported_value")
            for (role, hpke) in [("sender", sender), ("recipient", recipient)] {
                checker.step("exports[\(i)] \(role)") { checker in
                    checker.expect(try hpke.export(exporterContext: context, length: length).constantTimeEquals(expected), "exports[\(i)].exported_value (\(role))")
                }
            }
        }
    }
}
