/// The body of a `FramedContent`, selected by its content type (RFC 9420 §6).
public enum FramedContentBody: Hashable, Sendable {
    case application([UInt8])
    case proposal(Proposal)
    case commit(Commit)

    public var contentType: ContentType {
        switch self {
        case .application: return .application
        case .proposal: return .proposal
        case .commit: return .commit
        }
    }

    /// The body without its content type (as in PrivateMessageContent).
    func encodeBody(to writer: inout TLSWriter) {
        switch self {
        case .application(let data): writer.writeOpaque(data)
        case .proposal(let p): p.encode(to: &writer)
        case .commit(let c): c.encode(to: &writer)
        }
    }

    static func decodeBody(_ type: ContentType, from reader: inout TLSReader) throws -> FramedContentBody {
        switch type {
        case .application: return .application(try reader.readOpaque())
        case .proposal: return .proposal(try Proposal(from: &reader))
        case .commit: return .commit(try Commit(from: &reader))
        }
    }
}

/// `FramedContent` (RFC 9420 §6): the authenticated content of a handshake or application
/// message, before signing and protection.
public struct FramedContent: Hashable, Sendable, TLSCodable {
    public var groupID: [UInt8]
    public var epoch: UInt64
    public var sender: Sender
    public var authenticatedData: [UInt8]
    public var body: FramedContentBody

    public init(groupID: [UInt8], epoch: UInt64, sender: Sender, authenticatedData: [UInt8] = [], body: FramedContentBody) {
        self.groupID = groupID
        self.epoch = epoch
        self.sender = sender
        self.authenticatedData = authenticatedData
        self.body = body
    }

    public var contentType: ContentType { body.contentType }

    /// The label SignWithLabel/VerifyWithLabel use for framed content.
    public static let signatureLabel = "FramedContentTBS"

    /// The `FramedContentTBS` bytes signed by the sender (RFC 9420 §6.1).
    ///
    /// `serializedContext` is the TLS encoding of the current GroupContext; it is included for
    /// member and new_member_commit senders and ignored for the others, as the RFC specifies.
    public func toBeSigned(wireFormat: WireFormat, serializedContext: [UInt8]) -> [UInt8] {
        var w = TLSWriter(capacity: 128 + serializedContext.count)
        ProtocolVersion.mls10.encode(to: &w)
        wireFormat.encode(to: &w)
        encode(to: &w)
        switch sender {
        case .member, .newMemberCommit: w.writeRaw(serializedContext)
        case .external, .newMemberProposal: break
        }
        return w.bytes
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(groupID)
        writer.writeUInt64(epoch)
        sender.encode(to: &writer)
        writer.writeOpaque(authenticatedData)
        body.contentType.encode(to: &writer)
        body.encodeBody(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        groupID = try reader.readOpaque()
        epoch = try reader.readUInt64()
        sender = try Sender(from: &reader)
        authenticatedData = try reader.readOpaque()
        let type = try ContentType(from: &reader)
        body = try FramedContentBody.decodeBody(type, from: &reader)
    }
}

/// `FramedContentAuthData` (RFC 9420 §6.1): the sender's signature and, for commits, the
/// confirmation tag. Decoding needs the content type, which is not part of this structure.
public struct FramedContentAuthData: Hashable, Sendable {
    public var signature: [UInt8]
    /// `MAC confirmation_tag`, present exactly when the content is a commit.
    public var confirmationTag: [UInt8]?

    public init(signature: [UInt8], confirmationTag: [UInt8]? = nil) {
        self.signature = signature
        self.confirmationTag = confirmationTag
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeOpaque(signature)
        if let confirmationTag { writer.writeOpaque(confirmationTag) }
    }

    public init(from reader: inout TLSReader, contentType: ContentType) throws {
        signature = try reader.readOpaque()
        confirmationTag = contentType == .commit ? try reader.readOpaque() : nil
    }
}

/// `AuthenticatedContent` (RFC 9420 §6.1): framed content with its wire format and auth data,
/// the unit that proposal references and transcript hashes are computed over.
public struct AuthenticatedContent: Hashable, Sendable, TLSCodable {
    public var wireFormat: WireFormat
    public var content: FramedContent
    public var auth: FramedContentAuthData

    public init(wireFormat: WireFormat, content: FramedContent, auth: FramedContentAuthData) {
        self.wireFormat = wireFormat
        self.content = content
        self.auth = auth
    }

    /// `ConfirmedTranscriptHashInput` (RFC 9420 §8.2): wire_format, content and signature.
    public var confirmedTranscriptHashInput: [UInt8] {
        var w = TLSWriter(capacity: 256)
        wireFormat.encode(to: &w)
        content.encode(to: &w)
        w.writeOpaque(auth.signature)
        return w.bytes
    }

    public func encode(to writer: inout TLSWriter) {
        wireFormat.encode(to: &writer)
        content.encode(to: &writer)
        auth.encode(to: &writer)
    }

    public init(from reader: inout TLSReader) throws {
        wireFormat = try WireFormat(from: &reader)
        content = try FramedContent(from: &reader)
        auth = try FramedContentAuthData(from: &reader, contentType: content.contentType)
    }
}
