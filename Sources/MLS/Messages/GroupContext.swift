/// `GroupContext` (RFC 9420 §8.1): the group state every member agrees on in an epoch. Its
/// encoding is signed into FramedContentTBS and mixed into the key schedule.
public struct GroupContext: Hashable, Sendable, TLSCodable {
    public var version: ProtocolVersion
    /// The suite as carried; a group runs only 0x0001.
    public var cipherSuite: CipherSuite
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var treeHash: [UInt8]
    public var confirmedTranscriptHash: [UInt8]
    public var extensions: Extensions

    public init(
        version: ProtocolVersion = .mls10, cipherSuite: CipherSuite = .mls128DHKEMX25519AES128GCMSHA256Ed25519, groupID: [UInt8], epoch: UInt64,
        treeHash: [UInt8], confirmedTranscriptHash: [UInt8], extensions: Extensions = Extensions()
    ) {
        self.version = version
        self.cipherSuite = cipherSuite
        self.groupID = groupID
        self.epoch = epoch
        self.treeHash = treeHash
        self.confirmedTranscriptHash = confirmedTranscriptHash
        self.extensions = extensions
    }

    public func encode(to writer: inout TLSWriter) {
        version.encode(to: &writer)
        cipherSuite.encode(to: &writer)
        writer.writeOpaque(groupID)
        writer.writeUInt64(epoch)
        writer.writeOpaque(treeHash)
        writer.writeOpaque(confirmedTranscriptHash)
        extensions.encode(to: &writer)
    }

    /// Decodes and applies the GroupContext extension placement rule (`Extensions.validate`).
    public init(from reader: inout TLSReader) throws {
        version = try ProtocolVersion(from: &reader)
        cipherSuite = try CipherSuite(from: &reader)
        groupID = try reader.readOpaque()
        epoch = try reader.readUInt64()
        treeHash = try reader.readOpaque()
        confirmedTranscriptHash = try reader.readOpaque()
        extensions = try Extensions(from: &reader)
        try extensions.validate(for: .groupContext)
    }
}
