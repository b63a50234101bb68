import MLS

/// mlswg `secret-tree.json`: sender-data key and nonce from a ciphertext sample, and the
/// handshake and application key and nonce of each listed generation of every leaf, read
/// through the receiving side of the secret tree (so generation gaps ratchet forward).
enum SecretTreeConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        ConformanceReport.forEachSuiteCase(cases, file: "secret-tree") { vector, cs, checker in
            checker.step("sender_data") { checker in
                let senderData = try vector.object("sender_data")
                let derived = try SenderDataKey(cs, senderDataSecret: Secret(try senderData.bytes("sender_data_secret")),
                                                ciphertext: try senderData.bytes("ciphertext"))
                checker.expect(derived.key.constantTimeEquals(try senderData.bytes("key")), "sender_data.key")
                checker.expect(derived.nonce.constantTimeEquals(try senderData.bytes("nonce")), "sender_data.nonce")
            }
            let leaves = try vector.nestedObjects("leaves")
            var tree = try SecretTree(cs, encryptionSecret: Secret(try vector.bytes("encryption_secret")), leafCount: leaves.count)
            for (leaf, generations) in leaves.enumerated() {
                for entry in generations {
                    let generation = try entry.uint32("generation")
                    for type in [RatchetType.handshake, .application] {
                        let name = "leaves[\(leaf)] generation \(generation) \(type)"
                        checker.step(name) { checker in
                            let material = try tree.receiverKey(leaf: LeafIndex(UInt32(leaf)), type: type, generation: generation)
                            checker.expect(material.key.constantTimeEquals(try entry.bytes("\(type)_key")), "\(name) key")
                            checker.expect(material.nonce.constantTimeEquals(try entry.bytes("\(type)_nonce")), "\(name) nonce")
                        }
                    }
                }
            }
        }
    }
}
