/// A framed message as received (OpenMLS `ProtocolMessage`): a PublicMessage or PrivateMessage
/// whose signature, membership tag and encryption are all still unchecked.
///
/// Only the clear header is readable here — group id, epoch, content type — so a caller can
/// pick the epoch's `MessageSecrets` to unprotect it with. `MessageSecrets.unprotect` is the
/// only way to get at its content as a `VerifiedAuthenticatedContent`.
public enum ProtectedMessage: Hashable, Sendable {
    case publicMessage(PublicMessage)
    case privateMessage(PrivateMessage)

    /// The framed message inside `message`; throws `notAFramedMessage` for a Welcome, GroupInfo
    /// or KeyPackage.
    public init(_ message: MLSMessage) throws {
        switch message.body {
        case .publicMessage(let m): self = .publicMessage(m)
        case .privateMessage(let m): self = .privateMessage(m)
        case .welcome, .groupInfo, .keyPackage:
            throw MLSError.notAFramedMessage(wireFormat: message.wireFormat.rawValue)
        }
    }

    /// Decodes an `MLSMessage` and takes its framed message.
    public init(tlsSerialized bytes: [UInt8]) throws {
        try self.init(try MLSMessage(tlsSerialized: bytes))
    }

    public var wireFormat: WireFormat {
        switch self {
        case .publicMessage: return .publicMessage
        case .privateMessage: return .privateMessage
        }
    }

    public var groupID: [UInt8] {
        switch self {
        case .publicMessage(let m): return m.content.groupID
        case .privateMessage(let m): return m.groupID
        }
    }

    public var epoch: UInt64 {
        switch self {
        case .publicMessage(let m): return m.content.epoch
        case .privateMessage(let m): return m.epoch
        }
    }

    public var contentType: ContentType {
        switch self {
        case .publicMessage(let m): return m.content.contentType
        case .privateMessage(let m): return m.contentType
        }
    }

    /// The message in its MLSMessage envelope.
    public var mlsMessage: MLSMessage {
        switch self {
        case .publicMessage(let m): return MLSMessage(body: .publicMessage(m))
        case .privateMessage(let m): return MLSMessage(body: .privateMessage(m))
        }
    }
}
