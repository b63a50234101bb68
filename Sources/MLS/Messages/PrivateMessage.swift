/// `PrivateMessage` (RFC 9420 §6.3): encrypted framing. The sender data and content are sealed
/// with keys from the secret tree; this is the wire form before any decryption.
public struct PrivateMessage: Hashable, Sendable, TLSCodable {
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var contentType: ContentType
    public var authenticatedData: [UInt8]
    public var encryptedSenderData: [UInt8]
    public var ciphertext: [UInt8]

    public init(
        groupID: [UInt8], epoch: UInt64, contentType: ContentType, authenticatedData: [UInt8],
        encryptedSenderData: [UInt8], ciphertext: [UInt8]
    ) {
        self.groupID = groupID
        self.epoch = epoch
        self.contentType = contentType
        self.authenticatedData = authenticatedData
        self.encryptedSenderData = encryptedSenderData
        self.ciphertext = ciphertext
    }

    /// `PrivateContentAAD`: the associated data of the content encryption.
    public var contentAAD: [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        contentType.encode(to: &w)
        w.writeOpaque(authenticatedData)
        return w.bytes
    }

    /// `SenderDataAAD`: the associated data of the sender-data encryption.
    public var senderDataAAD: [UInt8] {
        var w = TLSWriter()
        w.writeOpaque(groupID)
        w.writeUInt64(epoch)
        contentType.encode(to: &w)
        return w.bytes
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(groupID)
        writer.writeUInt64(epoch)
        contentType.encode(to: &writer)
        writer.writeOpaque(authenticatedData)
        writer.writeOpaque(encryptedSenderData)
        writer.writeOpaque(ciphertext)
    }

    public init(from reader: inout TLSReader) throws {
        groupID = try reader.readOpaque()
        epoch = try reader.readUInt64()
        contentType = try ContentType(from: &reader)
        authenticatedData = try reader.readOpaque()
        encryptedSenderData = try reader.readOpaque()
        ciphertext = try reader.readOpaque()
    }
}

/// `PrivateMessageContent` (RFC 9420 §6.3.1): the plaintext of a PrivateMessage's ciphertext.
///
/// The trailing padding must be all zero bytes (RFC 9420 §6.3.1, OpenMLS valn1303); any length
/// is accepted. `paddingLength` zero bytes are appended when encoding.
public struct PrivateMessageContent: Hashable, Sendable {
    public var body: FramedContentBody
    public var auth: FramedContentAuthData
    public var paddingLength: Int

    public init(body: FramedContentBody, auth: FramedContentAuthData, paddingLength: Int = 0) {
        self.body = body
        self.auth = auth
        self.paddingLength = max(0, paddingLength)
    }

    public var tlsSerialized: [UInt8] {
        var w = TLSWriter()
        body.encodeBody(to: &w)
        auth.encode(to: &w)
        w.writeRaw(repeatElement(UInt8(0), count: paddingLength))
        return w.bytes
    }

    /// Decodes a decrypted plaintext whose content type comes from the PrivateMessage header.
    public init(tlsSerialized bytes: [UInt8], contentType: ContentType) throws {
        var r = TLSReader(bytes)
        body = try FramedContentBody.decodeBody(contentType, from: &r)
        auth = try FramedContentAuthData(from: &r, contentType: contentType)
        let padding = try r.readRaw(r.remaining)
        // Constant-time-ish: OR all bytes rather than stopping at the first non-zero one.
        guard padding.reduce(0, |) == 0 else { throw TLSDecodingError.malformed("non-zero padding in PrivateMessageContent") }
        paddingLength = padding.count
    }
}

/// `SenderData` (RFC 9420 §6.3.2): who sent a PrivateMessage and with which ratchet generation.
public struct SenderData: Hashable, Sendable, TLSCodable {
    public var leafIndex: UInt32
    public var generation: UInt32
    /// `opaque reuse_guard[4]`, XORed into the first nonce bytes.
    public var reuseGuard: [UInt8]

    public init(leafIndex: UInt32, generation: UInt32, reuseGuard: [UInt8]) {
        self.leafIndex = leafIndex
        self.generation = generation
        self.reuseGuard = reuseGuard
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt32(leafIndex)
        writer.writeUInt32(generation)
        // Exactly four bytes on the wire, whatever the caller put in.
        writer.writeRaw((reuseGuard + [0, 0, 0, 0]).prefix(4))
    }

    public init(from reader: inout TLSReader) throws {
        leafIndex = try reader.readUInt32()
        generation = try reader.readUInt32()
        reuseGuard = try reader.readRaw(4)
    }
}
