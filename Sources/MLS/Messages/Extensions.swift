/// `Extension extensions<V>` with RFC 9420 §13.4's rule that no type appears twice.
///
/// Order is kept as received (it is signed over). `validate(for:)` applies OpenMLS 0.8.1's rules
/// about which extension types may appear in which structure; the decoders of LeafNode,
/// KeyPackage and GroupInfo call it, GroupContext's decoder should too.
public struct Extensions: Hashable, Sendable, TLSCodable, RandomAccessCollection {
    public private(set) var list: [Extension]

    public init() { list = [] }

    /// Fails with `malformed` if two extensions share a type.
    public init(_ list: [Extension]) throws {
        var seen = Set<UInt16>()
        for ext in list where !seen.insert(ext.extensionType.rawValue).inserted {
            throw TLSDecodingError.malformed("duplicate extension type \(ext.extensionType)")
        }
        self.list = list
    }

    public var startIndex: Int { list.startIndex }
    public var endIndex: Int { list.endIndex }
    public subscript(position: Int) -> Extension { list[position] }

    public subscript(type: ExtensionType) -> Extension? { list.first { $0.extensionType == type } }

    public func contains(_ type: ExtensionType) -> Bool { self[type] != nil }

    /// Appends `ext`; fails if its type is already present.
    public mutating func insert(_ ext: Extension) throws {
        guard !contains(ext.extensionType) else {
            throw TLSDecodingError.malformed("duplicate extension type \(ext.extensionType)")
        }
        list.append(ext)
    }

    /// Replaces the extension of the same type in place, or appends it.
    public mutating func set(_ ext: Extension) {
        if let i = list.firstIndex(where: { $0.extensionType == ext.extensionType }) {
            list[i] = ext
        } else {
            list.append(ext)
        }
    }

    @discardableResult
    public mutating func remove(_ type: ExtensionType) -> Extension? {
        guard let i = list.firstIndex(where: { $0.extensionType == type }) else { return nil }
        return list.remove(at: i)
    }

    // MARK: Typed views

    public var applicationID: [UInt8]? {
        if case .applicationID(let id)? = self[.applicationID] { return id }
        return nil
    }

    /// The raw `extension_data` of the `ratchet_tree` extension.
    public var ratchetTree: [UInt8]? {
        if case .ratchetTree(let raw)? = self[.ratchetTree] { return raw }
        return nil
    }

    public var requiredCapabilities: RequiredCapabilities? {
        if case .requiredCapabilities(let rc)? = self[.requiredCapabilities] { return rc }
        return nil
    }

    public var externalPub: [UInt8]? {
        if case .externalPub(let key)? = self[.externalPub] { return key }
        return nil
    }

    public var externalSenders: [ExternalSender]? {
        if case .externalSenders(let senders)? = self[.externalSenders] { return senders }
        return nil
    }

    public var isLastResort: Bool { contains(.lastResort) }

    /// The data of an extension of a type MLS does not interpret (e.g. Marmot's 0xF2EE).
    public func unknown(_ type: ExtensionType) -> [UInt8]? {
        if case .unknown(_, let data)? = self[type] { return data }
        return nil
    }

    // MARK: Placement rules

    /// The structure an extension list belongs to.
    public enum Context: Sendable {
        case leafNode, keyPackage, groupInfo, groupContext
    }

    /// Rejects extension types not allowed in `context` (OpenMLS 0.8.1's valn1601–valn1604):
    /// leaf nodes take application_id and unknown types; KeyPackages last_resort and unknown
    /// types; GroupInfo ratchet_tree, external_pub and unknown types; GroupContext
    /// required_capabilities, external_senders and unknown types. GREASE types count as unknown
    /// in LeafNode, KeyPackage and GroupInfo extensions, where RFC 9420 §13.5 has senders put
    /// them (OpenMLS 0.8.1 decodes them as unknown; the mlswg tree-operations vectors carry them
    /// in leaf nodes), and are rejected in GroupContext, where §13.5 forbids them.
    public func validate(for context: Context) throws {
        for ext in list {
            let type = ext.extensionType
            let allowed: Bool
            switch (context, type) {
            case (.groupContext, _) where type.isGREASE: allowed = false
            case (.leafNode, .applicationID): allowed = true
            case (.keyPackage, .lastResort): allowed = true
            case (.groupInfo, .ratchetTree), (.groupInfo, .externalPub): allowed = true
            case (.groupContext, .requiredCapabilities), (.groupContext, .externalSenders): allowed = true
            case (_, _) where type.isDefault || type == .lastResort: allowed = false
            default: allowed = true  // unknown to MLS: the application's business
            }
            guard allowed else {
                throw TLSDecodingError.invalidValue(field: "extension type in \(context)", value: UInt64(type.rawValue))
            }
        }
    }

    public func encode(to writer: inout TLSWriter) { writer.writeVector(list) }

    public init(from reader: inout TLSReader) throws {
        try self.init(try reader.readVector(of: Extension.self))
    }
}
