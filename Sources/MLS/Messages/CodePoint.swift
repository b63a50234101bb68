/// A 16-bit MLS registry value (RFC 9420 §17): protocol versions, cipher suites, extension,
/// proposal and credential types, wire formats.
///
/// Values are kept as raw integers so that unknown and GREASE entries (§13.5) survive a
/// decode/encode round trip unchanged; named constants cover the values Burrow understands.
public protocol MLSCodePoint: RawRepresentable, Hashable, Sendable, TLSCodable, CustomStringConvertible
where RawValue == UInt16 {
    init(rawValue: UInt16)
}

extension MLSCodePoint {
    public init(_ value: UInt16) { self.init(rawValue: value) }

    public func encode(to writer: inout TLSWriter) { writer.writeUInt16(rawValue) }

    public init(from reader: inout TLSReader) throws { self.init(rawValue: try reader.readUInt16()) }

    /// True for the RFC 9420 §13.5 GREASE values 0x0A0A, 0x1A1A, …, 0xEAEA.
    public var isGREASE: Bool { GREASE.isGREASE(rawValue) }

    public var description: String {
        let hex = String(rawValue, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}

/// RFC 9420 §13.5: values reserved so that peers must tolerate unknown code points.
public enum GREASE {
    /// The fifteen GREASE values 0x0A0A, 0x1A1A, …, 0xEAEA (both bytes `?A`, equal; 0xFAFA is
    /// private use, not GREASE).
    public static let values: [UInt16] = (0..<15).map { i -> UInt16 in
        let byte = UInt16(i << 4 | 0x0A)
        return byte << 8 | byte
    }

    public static func isGREASE(_ value: UInt16) -> Bool {
        let high = value >> 8, low = value & 0xff
        return high == low && low & 0x0f == 0x0a && high != 0xfa
    }
}

/// `ProtocolVersion` (RFC 9420 §6). Only `mls10` is defined.
public struct ProtocolVersion: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let mls10 = ProtocolVersion(rawValue: 1)
}

/// `CipherSuite` (RFC 9420 §17.1) as carried on the wire. Any value round-trips (capabilities
/// list GREASE suites); `CipherSuiteProvider(suite)` is the check that yields cryptography, and
/// only 0x0001 passes it.
public struct CipherSuite: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    /// MLS_128_DHKEMX25519_AES128GCM_SHA256_Ed25519.
    public static let mls128DHKEMX25519AES128GCMSHA256Ed25519 = CipherSuite(rawValue: 0x0001)
}

/// `ExtensionType` (RFC 9420 §17.3, draft-ietf-mls-extensions).
public struct ExtensionType: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let applicationID = ExtensionType(rawValue: 0x0001)
    public static let ratchetTree = ExtensionType(rawValue: 0x0002)
    public static let requiredCapabilities = ExtensionType(rawValue: 0x0003)
    public static let externalPub = ExtensionType(rawValue: 0x0004)
    public static let externalSenders = ExtensionType(rawValue: 0x0005)
    /// KeyPackage extension marking a package reusable as a last resort (draft-ietf-mls-extensions).
    public static let lastResort = ExtensionType(rawValue: 0x000a)

    /// The RFC 9420 types every client supports implicitly (§7.2): they must not be listed in
    /// capabilities, and need not be for use.
    public var isDefault: Bool { (0x0001...0x0005).contains(rawValue) }
}

/// `ProposalType` (RFC 9420 §17.4, draft-ietf-mls-extensions).
public struct ProposalType: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let add = ProposalType(rawValue: 0x0001)
    public static let update = ProposalType(rawValue: 0x0002)
    public static let remove = ProposalType(rawValue: 0x0003)
    public static let preSharedKey = ProposalType(rawValue: 0x0004)
    public static let reInit = ProposalType(rawValue: 0x0005)
    public static let externalInit = ProposalType(rawValue: 0x0006)
    public static let groupContextExtensions = ProposalType(rawValue: 0x0007)
    /// SelfRemove, as assigned by draft-ietf-mls-extensions and OpenMLS 0.8.1.
    public static let selfRemove = ProposalType(rawValue: 0x000a)

    /// The RFC 9420 types every client supports implicitly (§7.2).
    public var isDefault: Bool { (0x0001...0x0007).contains(rawValue) }
}

/// `CredentialType` (RFC 9420 §17.5).
public struct CredentialType: MLSCodePoint {
    public let rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }

    public static let basic = CredentialType(rawValue: 0x0001)
    public static let x509 = CredentialType(rawValue: 0x0002)
}
