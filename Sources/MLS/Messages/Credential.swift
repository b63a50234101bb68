/// `Credential` (RFC 9420 §5.3): binds a member's identity to its signature key.
///
/// Like OpenMLS 0.8.1, every credential body is read as one `opaque<V>`: for `basic` that is the
/// identity, for `x509` the encoded `certificates<V>` vector, and for any other type opaque data
/// kept verbatim. Marmot's identity is the 32-byte x-only Nostr key in a basic credential.
public enum Credential: Hashable, Sendable, TLSCodable {
    case basic(identity: [UInt8])
    /// Any non-basic credential; the body is the content after the type, without its length.
    case other(CredentialType, body: [UInt8])

    public var credentialType: CredentialType {
        switch self {
        case .basic: return .basic
        case .other(let type, _): return type
        }
    }

    /// The basic credential's identity, or nil for other types.
    public var basicIdentity: [UInt8]? {
        if case .basic(let identity) = self { return identity }
        return nil
    }

    /// The DER certificates of an `x509` credential (`opaque cert_data<V>` each).
    public func x509Certificates() throws -> [[UInt8]] {
        guard case .other(.x509, let body) = self else {
            throw TLSDecodingError.malformed("credential is not x509")
        }
        var r = TLSReader(body)
        var certs: [[UInt8]] = []
        while !r.isAtEnd { certs.append(try r.readOpaque()) }
        return certs
    }

    public func encode(to writer: inout TLSWriter) {
        credentialType.encode(to: &writer)
        switch self {
        case .basic(let identity): writer.writeOpaque(identity)
        case .other(_, let body): writer.writeOpaque(body)
        }
    }

    public init(from reader: inout TLSReader) throws {
        let type = try CredentialType(from: &reader)
        let body = try reader.readOpaque()
        self = type == .basic ? .basic(identity: body) : .other(type, body: body)
    }
}
