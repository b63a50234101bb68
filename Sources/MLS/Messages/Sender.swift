/// `ContentType` (RFC 9420 §6): what a framed message carries. No extension point: other
/// values are rejected.
public enum ContentType: UInt8, Hashable, Sendable, TLSCodable {
    case application = 1
    case proposal = 2
    case commit = 3

    public func encode(to writer: inout TLSWriter) { writer.writeUInt8(rawValue) }

    public init(from reader: inout TLSReader) throws {
        let v = try reader.readUInt8()
        guard let type = ContentType(rawValue: v) else {
            throw TLSDecodingError.invalidValue(field: "content_type", value: UInt64(v))
        }
        self = type
    }
}

/// `Sender` (RFC 9420 §6): who sent a framed message.
public enum Sender: Hashable, Sendable, TLSCodable {
    /// A group member, by leaf index.
    case member(leafIndex: UInt32)
    /// A party listed in the group's `external_senders` extension, by its index there.
    case external(senderIndex: UInt32)
    /// A non-member proposing to be added (an Add of its own KeyPackage).
    case newMemberProposal
    /// A non-member joining by external commit.
    case newMemberCommit

    /// The wire `SenderType`: member 1, external 2, new_member_proposal 3, new_member_commit 4.
    public var senderType: UInt8 {
        switch self {
        case .member: return 1
        case .external: return 2
        case .newMemberProposal: return 3
        case .newMemberCommit: return 4
        }
    }

    public func encode(to writer: inout TLSWriter) {
        writer.writeUInt8(senderType)
        switch self {
        case .member(let leaf): writer.writeUInt32(leaf)
        case .external(let index): writer.writeUInt32(index)
        case .newMemberProposal, .newMemberCommit: break
        }
    }

    public init(from reader: inout TLSReader) throws {
        switch try reader.readUInt8() {
        case 1: self = .member(leafIndex: try reader.readUInt32())
        case 2: self = .external(senderIndex: try reader.readUInt32())
        case 3: self = .newMemberProposal
        case 4: self = .newMemberCommit
        case let v: throw TLSDecodingError.invalidValue(field: "sender_type", value: UInt64(v))
        }
    }
}

/// `WireFormat` (RFC 9420 §6). Values are kept raw because FramedContentTBS signs them; the
/// MLSMessage decoder accepts only the five defined formats.
public struct WireFormat: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let publicMessage = WireFormat(rawValue: 1)
    public static let privateMessage = WireFormat(rawValue: 2)
    public static let welcome = WireFormat(rawValue: 3)
    public static let groupInfo = WireFormat(rawValue: 4)
    public static let keyPackage = WireFormat(rawValue: 5)
}
