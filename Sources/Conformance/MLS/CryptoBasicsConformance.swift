import MLS

/// mlswg `crypto-basics.json`: RefHash, ExpandWithLabel, DeriveSecret, DeriveTreeSecret,
/// SignWithLabel/VerifyWithLabel and EncryptWithLabel/DecryptWithLabel (RFC 9420 §5).
enum CryptoBasicsConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "crypto-basics") { vector, suite, checker in

            checker.step("ref_hash") { checker in
                let v = try vector.object("ref_hash")
                checker.expect(suite.refHash(label: try v.string("label"), value: try v.bytes("value")) == (try v.bytes("out")), "ref_hash.out")
            }
            checker.step("expand_with_label") { checker in
                let v = try vector.object("expand_with_label")
                let out = try suite.expandWithLabel(Secret(try v.bytes("secret")), label: try v.string("label"),
                                                    context: try v.bytes("context"), length: try v.int("length"))
                checker.expect(out.constantTimeEquals(try v.bytes("out")), "expand_with_label.out")
            }
            checker.step("derive_secret") { checker in
                let v = try vector.object("derive_secret")
                let out = suite.deriveSecret(Secret(try v.bytes("secret")), label: try v.string("label"))
                checker.expect(out.constantTimeEquals(try v.bytes("out")), "derive_secret.out")
            }
            checker.step("derive_tree_secret") { checker in
                let v = try vector.object("derive_tree_secret")
                let generation = try v.uint32("generation")
                let out = try suite.deriveTreeSecret(Secret(try v.bytes("secret")), label: try v.string("label"),
                                                     generation: generation, length: try v.int("length"))
                checker.expect(out.constantTimeEquals(try v.bytes("out")), "derive_tree_secret.out")
            }
            checker.step("sign_with_label") { checker in
                let v = try vector.object("sign_with_label")
                let key = try SignaturePrivateKey(seed: Secret(try v.bytes("priv")))
                let publicKey = SignaturePublicKey(try v.bytes("pub"))
                checker.expect(key.publicKey == publicKey, "sign_with_label.pub")
                let (label, content) = (try v.string("label"), try v.bytes("content"))
                checker.step("sign_with_label verify given") { checker in
                    try suite.verifyWithLabel(publicKey, label: label, content: content, signature: try v.bytes("signature"))
                }
                checker.step("sign_with_label verify own") { checker in
                    let own = try suite.signWithLabel(key, label: label, content: content)
                    try suite.verifyWithLabel(publicKey, label: label, content: content, signature: own)
                    // Ed25519 is deterministic (RFC 8032), so ours must equal the generator's.
                    checker.expect(own == (try v.bytes("signature")), "sign_with_label.signature (own, deterministic Ed25519)")
                }
            }
            checker.step("encrypt_with_label") { checker in
                let v = try vector.object("encrypt_with_label")
                let privateKey = try HPKEPrivateKey(Secret(try v.bytes("priv")))
                let publicKey = HPKEPublicKey(try v.bytes("pub"))
                checker.expect(try privateKey.publicKey() == publicKey, "encrypt_with_label.pub")
                let (label, context, plaintext) = (try v.string("label"), try v.bytes("context"), try v.bytes("plaintext"))
                checker.step("encrypt_with_label decrypt given") { checker in
                    let given = HPKECiphertext(kemOutput: try v.bytes("kem_output"), ciphertext: try v.bytes("ciphertext"))
                    checker.expect(try suite.decryptWithLabel(privateKey, label: label, context: context, ciphertext: given) == plaintext,
                                   "encrypt_with_label.plaintext (given ciphertext)")
                }
                checker.step("encrypt_with_label round trip") { checker in
                    var rng = SystemRandomNumberGenerator()
                    let own = try suite.encryptWithLabel(publicKey, label: label, context: context, plaintext: plaintext, using: &rng)
                    checker.expect(try suite.decryptWithLabel(privateKey, label: label, context: context, ciphertext: own) == plaintext,
                                   "encrypt_with_label.plaintext (own ciphertext)")
                }
            }
        }
    }
}
