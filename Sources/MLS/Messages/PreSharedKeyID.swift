/// `ResumptionPSKUsage` (RFC 9420 §8.4).
public enum ResumptionPSKUsage: UInt8, Hashable, Sendable, TLSCodable {
    case application = 1
    case reinit = 2
    case branch = 3

    public func encode(to writer: inout TLSWriter) { writer.writeUInt8(rawValue) }

    public init(from reader: inout TLSReader) throws {
        let v = try reader.readUInt8()
        guard let usage = ResumptionPSKUsage(rawValue: v) else {
            throw TLSDecodingError.invalidValue(field: "resumption_psk_usage", value: UInt64(v))
        }
        self = usage
    }
}

/// `PreSharedKeyID` (RFC 9420 §8.4): names a PSK injected into the key schedule.
public struct PreSharedKeyID: Hashable, Sendable, TLSCodable {
    public enum PSK: Hashable, Sendable {
        /// `psktype` external (1): an application-provided PSK.
        case external(pskID: [UInt8])
        /// `psktype` resumption (2): a past epoch's resumption secret.
        case resumption(usage: ResumptionPSKUsage, groupID: [UInt8], epoch: UInt64)
    }

    public var psk: PSK
    public var nonce: [UInt8]

    public init(psk: PSK, nonce: [UInt8]) {
        self.psk = psk
        self.nonce = nonce
    }

    public func encode(to writer: inout TLSWriter) {
        switch psk {
        case .external(let pskID):
            writer.writeUInt8(1)
            writer.writeOpaque(pskID)
        case .resumption(let usage, let groupID, let epoch):
            writer.writeUInt8(2)
            usage.encode(to: &writer)
            writer.writeOpaque(groupID)
            writer.writeUInt64(epoch)
        }
        writer.writeOpaque(nonce)
    }

    public init(from reader: inout TLSReader) throws {
        switch try reader.readUInt8() {
        case 1:
            psk = .external(pskID: try reader.readOpaque())
        case 2:
            let usage = try ResumptionPSKUsage(from: &reader)
            let groupID = try reader.readOpaque()
            psk = .resumption(usage: usage, groupID: groupID, epoch: try reader.readUInt64())
        case let v:
            throw TLSDecodingError.invalidValue(field: "psktype", value: UInt64(v))
        }
        nonce = try reader.readOpaque()
    }
}
