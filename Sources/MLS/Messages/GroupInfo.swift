/// `GroupInfo` (RFC 9420 §12.4.3): what a joiner needs to enter the group, signed by the member
/// at leaf `signer`. A decoded GroupInfo is unverified until that signature is checked.
public struct GroupInfo: Hashable, Sendable, TLSCodable {
    public var groupContext: GroupContext
    /// GroupInfo extensions (ratchet_tree, external_pub, unknown types).
    public var extensions: Extensions
    /// `MAC confirmation_tag` of the epoch.
    public var confirmationTag: [UInt8]
    public var signer: UInt32
    public var signature: [UInt8]

    public init(groupContext: GroupContext, extensions: Extensions = Extensions(), confirmationTag: [UInt8], signer: UInt32, signature: [UInt8] = []) {
        self.groupContext = groupContext
        self.extensions = extensions
        self.confirmationTag = confirmationTag
        self.signer = signer
        self.signature = signature
    }

    /// The label SignWithLabel/VerifyWithLabel use for GroupInfo.
    public static let signatureLabel = "GroupInfoTBS"

    /// The `GroupInfoTBS` bytes: everything but the signature.
    public var toBeSigned: [UInt8] {
        var w = TLSWriter(capacity: 256)
        encodeContent(to: &w)
        return w.bytes
    }

    private func encodeContent(to w: inout TLSWriter) {
        groupContext.encode(to: &w)
        extensions.encode(to: &w)
        w.writeOpaque(confirmationTag)
        w.writeUInt32(signer)
    }

    public func encode(to writer: inout TLSWriter) {
        encodeContent(to: &writer)
        writer.writeOpaque(signature)
    }

    public init(from reader: inout TLSReader) throws {
        groupContext = try GroupContext(from: &reader)
        extensions = try Extensions(from: &reader)
        try extensions.validate(for: .groupInfo)
        confirmationTag = try reader.readOpaque()
        signer = try reader.readUInt32()
        signature = try reader.readOpaque()
    }
}
