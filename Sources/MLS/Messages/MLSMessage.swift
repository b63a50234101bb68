/// `MLSMessage` (RFC 9420 §6): the envelope every MLS message travels in.
///
/// Everything decoded here is unauthenticated wire data: framing, signatures and MACs are
/// checked when the message is processed by a group. The decoder accepts only version mls10 and
/// the five defined wire formats (the RFC's `select` has no default case).
public struct MLSMessage: Hashable, Sendable, TLSCodable {
    public enum Body: Hashable, Sendable {
        case publicMessage(PublicMessage)
        case privateMessage(PrivateMessage)
        case welcome(Welcome)
        case groupInfo(GroupInfo)
        case keyPackage(KeyPackage)
    }

    public var version: ProtocolVersion
    public var body: Body

    public init(version: ProtocolVersion = .mls10, body: Body) {
        self.version = version
        self.body = body
    }

    public var wireFormat: WireFormat {
        switch body {
        case .publicMessage: return .publicMessage
        case .privateMessage: return .privateMessage
        case .welcome: return .welcome
        case .groupInfo: return .groupInfo
        case .keyPackage: return .keyPackage
        }
    }

    public func encode(to writer: inout TLSWriter) {
        version.encode(to: &writer)
        wireFormat.encode(to: &writer)
        switch body {
        case .publicMessage(let m): m.encode(to: &writer)
        case .privateMessage(let m): m.encode(to: &writer)
        case .welcome(let m): m.encode(to: &writer)
        case .groupInfo(let m): m.encode(to: &writer)
        case .keyPackage(let m): m.encode(to: &writer)
        }
    }

    public init(from reader: inout TLSReader) throws {
        version = try ProtocolVersion(from: &reader)
        guard version == .mls10 else {
            throw TLSDecodingError.invalidValue(field: "MLSMessage.version", value: UInt64(version.rawValue))
        }
        let format = try WireFormat(from: &reader)
        switch format {
        case .publicMessage: body = .publicMessage(try PublicMessage(from: &reader))
        case .privateMessage: body = .privateMessage(try PrivateMessage(from: &reader))
        case .welcome: body = .welcome(try Welcome(from: &reader))
        case .groupInfo: body = .groupInfo(try GroupInfo(from: &reader))
        case .keyPackage:
            let keyPackage = try KeyPackage(from: &reader)
            // OpenMLS valn0205: the KeyPackage's version must match the envelope's.
            guard keyPackage.version == version else {
                throw TLSDecodingError.invalidValue(field: "KeyPackage.version", value: UInt64(keyPackage.version.rawValue))
            }
            body = .keyPackage(keyPackage)
        default:
            throw TLSDecodingError.invalidValue(field: "wire_format", value: UInt64(format.rawValue))
        }
    }
}
