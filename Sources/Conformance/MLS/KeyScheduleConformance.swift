import MLS

/// mlswg `key-schedule.json`: a chain of epochs from `initial_init_secret`. Each epoch builds
/// its GroupContext, runs the schedule on the given commit and PSK secrets, and compares every
/// derived secret, the external public key and one MLS-Exporter output.
enum KeyScheduleConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "key-schedule") { vector, cs, checker in
            let groupID = try vector.bytes("group_id")
            var initSecret = Secret(try vector.bytes("initial_init_secret"))
            for (n, epoch) in try vector.objects("epochs").enumerated() {
                let context = GroupContext(cipherSuite: cs.suite, groupID: groupID, epoch: UInt64(n),
                                           treeHash: try epoch.bytes("tree_hash"),
                                           confirmedTranscriptHash: try epoch.bytes("confirmed_transcript_hash"))
                checker.expect(context.tlsSerialized == (try epoch.bytes("group_context")), "epochs[\(n)].group_context")

                let commitSecret = Secret(try epoch.bytes("commit_secret"))
                let pskSecret = Secret(try epoch.bytes("psk_secret"))
                let joiner = try KeySchedule.joinerSecret(cs, initSecret: initSecret, commitSecret: commitSecret, groupContext: context)
                checker.expect(joiner.constantTimeEquals(try epoch.bytes("joiner_secret")), "epochs[\(n)].joiner_secret")
                let welcome = KeySchedule.welcomeSecret(cs, joinerSecret: joiner, pskSecret: pskSecret)
                checker.expect(welcome.constantTimeEquals(try epoch.bytes("welcome_secret")), "epochs[\(n)].welcome_secret")

                let secrets = try EpochSecrets(cs, joinerSecret: joiner, pskSecret: pskSecret, groupContext: context)
                let derived: [(String, Secret)] = [
                    ("sender_data_secret", secrets.senderDataSecret), ("encryption_secret", secrets.encryptionSecret),
                    ("exporter_secret", secrets.exporterSecret), ("epoch_authenticator", secrets.epochAuthenticator),
                    ("external_secret", secrets.externalSecret), ("confirmation_key", secrets.confirmationKey),
                    ("membership_key", secrets.membershipKey), ("resumption_psk", secrets.resumptionPSK),
                    ("init_secret", secrets.initSecret),
                ]
                for (field, secret) in derived {
                    checker.expect(secret.constantTimeEquals(try epoch.bytes(field)), "epochs[\(n)].\(field)")
                }
                checker.step("epochs[\(n)].external_pub") { checker in
                    checker.expect(try secrets.externalKeyPair().publicKey.bytes == (try epoch.bytes("external_pub")), "epochs[\(n)].external_pub")
                }
                checker.step("epochs[\(n)].exporter") { checker in
                    let exporter = try epoch.object("exporter")
                    // The vector's label is a string used as is (it happens to look like hex);
                    // the context is hex-encoded bytes.
                    let out = try secrets.exporter(label: try exporter.string("label"), context: try exporter.bytes("context"),
                                                   length: try exporter.int("length"))
                    checker.expect(out.constantTimeEquals(try exporter.bytes("secret")), "epochs[\(n)].exporter.secret")
                }
                initSecret = secrets.initSecret
            }
        }
    }
}
