import MLS

/// mlswg `messages.json`: every field decodes as its structure and re-encodes to the same bytes.
///
/// The `mls_*`, `public_message_*` and `private_message` fields are MLSMessages whose wire format
/// is checked too; `ratchet_tree` is `optional<Node> ratchet_tree<V>`; the proposal fields are
/// the proposal bodies (Add, Update, …) without their type.
enum MessagesConformance {
    static func run(_ cases: [[String: Any]]) -> ConformanceReport {
        var report = ConformanceReport()
        for (i, object) in cases.enumerated() {
            report.record("messages[\(i)]", Result { try check(VectorCase(object)) })
        }
        return report
    }

    private static let envelopes: [(String, WireFormat)] = [
        ("mls_welcome", .welcome), ("mls_group_info", .groupInfo), ("mls_key_package", .keyPackage),
        ("public_message_application", .publicMessage), ("public_message_proposal", .publicMessage),
        ("public_message_commit", .publicMessage), ("private_message", .privateMessage),
    ]

    /// Each structure field with a round trip through its type (decode, then serialize).
    private static let structures: [(String, @Sendable (String, [UInt8]) throws -> [UInt8])] = [
        ("ratchet_tree", roundTrip(UnverifiedRatchetTree.self)),
        ("group_secrets", roundTrip(GroupSecrets.self)),
        ("add_proposal", roundTrip(AddProposal.self)),
        ("update_proposal", roundTrip(UpdateProposal.self)),
        ("remove_proposal", roundTrip(RemoveProposal.self)),
        ("pre_shared_key_proposal", roundTrip(PreSharedKeyProposal.self)),
        ("re_init_proposal", roundTrip(ReInitProposal.self)),
        ("external_init_proposal", roundTrip(ExternalInitProposal.self)),
        ("group_context_extensions_proposal", roundTrip(GroupContextExtensionsProposal.self)),
        ("commit", roundTrip(Commit.self)),
    ]

    private static func roundTrip<T: TLSCodable & SendableMetatype>(_ type: T.Type) -> @Sendable (String, [UInt8]) throws -> [UInt8] {
        { field, bytes in try decode(T.self, field, bytes).tlsSerialized }
    }

    static func check(_ v: VectorCase) throws {
        for (field, format) in envelopes {
            let bytes = try v.bytes(field)
            let message = try decode(MLSMessage.self, field, bytes)
            guard message.wireFormat == format else {
                throw ConformanceCaseError.mismatch("\(field): wire format \(message.wireFormat), expected \(format)")
            }
            try same(field, message.tlsSerialized, bytes)
        }
        for (field, roundTrip) in structures {
            let bytes = try v.bytes(field)
            try same(field, try roundTrip(field, bytes), bytes)
        }
    }

    private static func decode<T: TLSCodable>(_ type: T.Type, _ field: String, _ bytes: [UInt8]) throws -> T {
        do {
            return try T(tlsSerialized: bytes)
        } catch {
            throw ConformanceCaseError.mismatch("\(field) does not decode: \(error)")
        }
    }

    private static func same(_ field: String, _ encoded: [UInt8], _ expected: [UInt8]) throws {
        guard encoded == expected else {
            let at = zip(encoded, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(encoded.count, expected.count)
            throw ConformanceCaseError.mismatch("\(field) re-encodes differently (\(encoded.count) vs \(expected.count) bytes, first difference at byte \(at))")
        }
    }
}
