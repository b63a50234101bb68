/// Serializing a member's complete group state for the encrypted store (never the wire): the
/// current epoch (tree, transcript hashes, retained key-schedule secrets, message secrets,
/// private keys, signature key, proposals), a pending commit, the retained past epochs and PSKs.
///
/// The bytes hold private keys and secrets in the clear. Restoring re-checks what ties the
/// parts together (tree structure and hash, private keys against the tree, our signature key
/// against our leaf), so a damaged record fails with `invalidGroupState` instead of yielding a
/// group that misbehaves later.
enum GroupStateCodec {
    static let formatVersion: UInt16 = 1

    static func readSecret(_ reader: inout TLSReader) throws -> Secret {
        var bytes = try reader.readOpaque()
        defer { Secret.wipe(&bytes) }
        return Secret(bytes)
    }

    static func writeSecret(_ secret: Secret, to writer: inout TLSWriter) {
        secret.withUnsafeBytes { writer.writeOpaque($0) }
    }
}

extension GroupEpochState {
    func encode(to writer: inout TLSWriter) {
        tree.encode(to: &writer)
        writer.writeOpaque(interimTranscriptHash)
        writer.writeOpaque(confirmationTag)
        epochSecrets.encode(to: &writer)
        messageSecrets.encode(to: &writer)
        privateKeys.encode(to: &writer)
        GroupStateCodec.writeSecret(signer.seed, to: &writer)
        writer.writeVector(proposals.entries)
    }

    init(from reader: inout TLSReader) throws {
        let unverifiedTree = try UnverifiedRatchetTree(from: &reader)
        let interim = try reader.readOpaque()
        let tag = try reader.readOpaque()
        let epochSecrets = try EpochSecrets(from: &reader)
        let messageSecrets = try MessageSecrets(from: &reader)
        let privateKeys = try TreeKEMPrivateKeys(from: &reader)
        let signer = try SignaturePrivateKey(seed: GroupStateCodec.readSecret(&reader))
        let proposals = try reader.readVector(of: StoredProposal.self)

        let tree = unverifiedTree.padded()
        do { try tree.verifyStructure() } catch { throw MLSError.invalidGroupState("ratchet tree: \(error)") }
        guard tree.treeHash == messageSecrets.groupContext.treeHash else {
            throw MLSError.invalidGroupState("ratchet tree does not match the GroupContext's tree hash")
        }
        guard epochSecrets.cipherSuite == messageSecrets.cipherSuite else {
            throw MLSError.invalidGroupState("epoch secrets and message secrets name different suites")
        }
        do { try privateKeys.verify(against: tree) } catch { throw MLSError.invalidGroupState("private keys do not match the tree") }
        guard tree.leaf(at: privateKeys.ownLeaf)?.signatureKey == signer.publicKey.bytes else {
            throw MLSError.invalidGroupState("signature key does not match our leaf")
        }
        self.init(tree: tree, interimTranscriptHash: interim, confirmationTag: tag, epochSecrets: epochSecrets,
                  messageSecrets: messageSecrets, privateKeys: privateKeys, signer: signer, proposals: ProposalStore(entries: proposals))
    }
}

extension MLSGroup {
    /// The complete state, for the encrypted store. Contains secrets: never log or send it.
    public func serialized() -> [UInt8] {
        var w = TLSWriter(capacity: 4096)
        w.writeUInt16(GroupStateCodec.formatVersion)
        configuration.encode(to: &w)
        w.writeUInt8(isActive ? 1 : 0)
        state.encode(to: &w)
        if let pending {
            w.writeUInt8(1)
            pending.message.encode(to: &w)
            w.writeOptional(pending.welcome)
            w.writeOptional(pending.groupInfo)
            pending.summary.encode(to: &w)
            pending.next.encode(to: &w)
        } else {
            w.writeUInt8(0)
        }
        w.writeVector { v in
            for past in pastEpochs {
                past.messageSecrets.encode(to: &v)
                GroupStateCodec.writeSecret(past.exporterSecret, to: &v)
                v.writeVector { m in
                    for (leaf, node) in past.members.sorted(by: { $0.key < $1.key }) {
                        m.writeUInt32(leaf)
                        node.encode(to: &m)
                    }
                }
            }
        }
        w.writeVector { v in
            for (epoch, secret) in resumptionPSKs.sorted(by: { $0.key < $1.key }) {
                v.writeUInt64(epoch)
                GroupStateCodec.writeSecret(secret, to: &v)
            }
        }
        w.writeVector { v in
            for (id, secret) in externalPSKs.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
                v.writeOpaque(id)
                GroupStateCodec.writeSecret(secret, to: &v)
            }
        }
        return w.bytes
    }

    /// Restores a group from `serialized()` output. Throws `invalidGroupState` (or a decoding
    /// error) for damaged or foreign bytes.
    public init(serialized bytes: [UInt8]) throws {
        var r = TLSReader(bytes)
        let version = try r.readUInt16()
        guard version == GroupStateCodec.formatVersion else { throw MLSError.invalidGroupState("unknown format version \(version)") }
        let configuration = try GroupConfiguration(from: &r)
        let active = try r.readUInt8()
        guard active <= 1 else { throw MLSError.invalidGroupState("active flag \(active)") }
        let state = try GroupEpochState(from: &r)
        let pending: PendingCommit? = try r.readOptional { r in
            PendingCommit(message: try MLSMessage(from: &r), welcome: try r.readOptional(Welcome.self),
                          groupInfo: try r.readOptional(GroupInfo.self), summary: try CommitSummary(from: &r),
                          next: try GroupEpochState(from: &r))
        }
        let past = try r.readVector { r -> PastEpoch in
            let secrets = try MessageSecrets(from: &r)
            let exporterSecret = try GroupStateCodec.readSecret(&r)
            guard exporterSecret.count == secrets.cipherSuite.kdfNh else { throw MLSError.invalidGroupState("past exporter secret length") }
            var members: [UInt32: LeafNode] = [:]
            for (leaf, node) in try r.readVector({ m in (try m.readUInt32(), try LeafNode(from: &m)) }) {
                guard members.updateValue(node, forKey: leaf) == nil else { throw MLSError.invalidGroupState("past member listed twice") }
            }
            return PastEpoch(messageSecrets: secrets, members: members, exporterSecret: exporterSecret)
        }
        var resumption: [UInt64: Secret] = [:]
        for (epoch, secret) in try r.readVector({ v in (try v.readUInt64(), try GroupStateCodec.readSecret(&v)) }) {
            resumption[epoch] = secret
        }
        var external: [[UInt8]: Secret] = [:]
        for (id, secret) in try r.readVector({ v in (try v.readOpaque(), try GroupStateCodec.readSecret(&v)) }) {
            external[id] = secret
        }
        try r.finish()
        guard pending.map({ $0.next.epoch == state.epoch + 1 && $0.next.groupContext.groupID == state.groupContext.groupID }) ?? true,
              past.allSatisfy({ $0.epoch <= state.epoch && $0.messageSecrets.groupID == state.groupContext.groupID })
        else { throw MLSError.invalidGroupState("pending commit or past epochs do not belong to this group's history") }
        self.init(state: state, configuration: configuration, externalPSKs: external)
        self.pending = pending
        self.pastEpochs = past
        self.resumptionPSKs = resumption
        self.isActive = active == 1
    }
}
