import MLS

/// mlswg `message-protection.json`, both directions. The group has two members and the sender
/// is leaf 1; the GroupContext has the given group id, epoch, tree hash and confirmed transcript
/// hash and no extensions.
/// - Unprotect: `proposal_pub`/`commit_pub` verify with `membership_key` and `signature_pub`,
///   and `proposal_priv`/`commit_priv`/`application_priv` decrypt with the secret tree of
///   `encryption_secret` and `sender_data_secret`; each yields exactly the given raw value.
/// - Protect: we sign each raw value with `signature_priv`, protect it as PublicMessage
///   (proposal, commit) and PrivateMessage (all three), encode, decode and unprotect it again
///   with fresh receiving state.
enum MessageProtectionConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "message-protection") { vector, cs, checker in
            let context = GroupContext(cipherSuite: cs.suite, groupID: try vector.bytes("group_id"), epoch: try vector.uint64("epoch"),
                                       treeHash: try vector.bytes("tree_hash"),
                                       confirmedTranscriptHash: try vector.bytes("confirmed_transcript_hash"))
            let encryptionSecret = Secret(try vector.bytes("encryption_secret"))
            let senderDataSecret = Secret(try vector.bytes("sender_data_secret"))
            let membershipKey = Secret(try vector.bytes("membership_key"))
            func freshSecrets() throws -> MessageSecrets {
                MessageSecrets(cipherSuite: cs, groupContext: context, senderDataSecret: senderDataSecret, membershipKey: membershipKey,
                               secretTree: try SecretTree(cs, encryptionSecret: encryptionSecret, leafCount: 2))
            }
            let signer = try SignaturePrivateKey(seed: Secret(try vector.bytes("signature_priv")))
            let signaturePublic = SignaturePublicKey(try vector.bytes("signature_pub"))
            checker.expect(signer.publicKey == signaturePublic, "signature_pub")
            let sender = Sender.member(leafIndex: 1)
            let lookup: (Sender) throws -> SignaturePublicKey = { candidate in
                guard candidate == sender else { throw ConformanceCaseError.mismatch("sender \(candidate) is not leaf 1") }
                return signaturePublic
            }

            let bodies: [(String, FramedContentBody)] = [
                ("proposal", .proposal(try Proposal(tlsSerialized: try vector.bytes("proposal")))),
                ("commit", .commit(try Commit(tlsSerialized: try vector.bytes("commit")))),
                ("application", .application(try vector.bytes("application"))),
            ]
            for (name, body) in bodies {
                var confirmationTag: [UInt8]?
                let formats = body.contentType == .application ? ["priv"] : ["pub", "priv"]
                for format in formats {
                    checker.step("\(name)_\(format)") { checker in
                        let message = try ProtectedMessage(tlsSerialized: try vector.bytes("\(name)_\(format)"))
                        // Fresh state per message: the vector does not say which generations its
                        // messages share.
                        var receiver = try freshSecrets()
                        let verified = try receiver.unprotect(message, signatureKey: lookup)
                        checker.expect(verified.sender == sender, "\(name)_\(format) sender")
                        checker.expect(verified.body == body, "\(name)_\(format) content")
                        confirmationTag = verified.confirmationTag
                    }
                }
                for wireFormat in body.contentType == .application ? [WireFormat.privateMessage] : [.publicMessage, .privateMessage] {
                    checker.step("protect \(name) as wire format \(wireFormat.rawValue)") { checker in
                        var senderSecrets = try freshSecrets()
                        var content = try senderSecrets.sign(body, from: LeafIndex(1), wireFormat: wireFormat, signer: signer)
                        if body.contentType == .commit {
                            // Framing carries the tag without checking it; any MAC-sized value will do.
                            content.auth.confirmationTag = confirmationTag ?? cs.mac(key: membershipKey, data: context.confirmedTranscriptHash)
                        }
                        let protected: ProtectedMessage
                        if wireFormat == .publicMessage {
                            protected = .publicMessage(try senderSecrets.protectPublic(content))
                        } else {
                            var rng = SystemRandomNumberGenerator()
                            protected = .privateMessage(try senderSecrets.protectPrivate(content, using: &rng))
                        }
                        let received = try ProtectedMessage(tlsSerialized: protected.mlsMessage.tlsSerialized)
                        var ownReceiver = try freshSecrets()
                        let verified = try ownReceiver.unprotect(received, signatureKey: lookup)
                        checker.expect(verified.authenticatedContent == content, "\(name) round trip as wire format \(wireFormat.rawValue)")
                    }
                }
            }
        }
    }
}
