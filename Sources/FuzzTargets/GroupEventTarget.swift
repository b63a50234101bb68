import MLS
import Marmot
import Nostr
import SeededRandom

/// Structure-aware: mutated MLS traffic delivered to a real group member (`GroupEventFixture`)
/// inside kind-445 events that are correctly encrypted with the epoch's exporter secret and
/// signed, so the input gets past the Nostr signature and the outer AEAD that would stop random
/// bytes, and (modes 0–3) past MLS's own signature, membership tag and content AEAD as well:
/// the mutation happens before signing and protection, with the real sender's keys.
///
/// Input: `[mode, selector] ‖ payload`; mode % 5 is
/// - 0: application data (`payload`), or with selector bit 2 a rumor rebuilt from the
///   payload's JSON fields with its id computed, so the inner-event checks run on it;
/// - 1: a Proposal (TLS) sent as the sender's PublicMessage (selector bit 1) or PrivateMessage;
/// - 2: a Commit (TLS) followed by `opaque confirmation_tag<V>`, sent likewise;
/// - 3: a content template (selector) with `payload` applied as a `ByteEdits` script to the
///   encoding of its body, re-signed and protected as the template was;
/// - 4: a message template (selector) with `payload` applied to its serialized MLSMessage, or
///   when selector is past the templates, `payload` as the MLSMessage itself.
/// The sender is Alice (admin) or Carol (member) by selector bit 0 for modes 0–2.
///
/// Properties: a message the group refuses leaves its serialized state byte for byte as it was;
/// after an accepted commit the group is in the next epoch (or was removed) and its state
/// serializes and deserializes to the same bytes.
public enum GroupEventTarget: FuzzTarget {
    public static let name = "group-event"
    public static let modeCount = 5

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let fixture = GroupEventFixture.shared else { throw PropertyViolation(name, "the group fixture could not be made") }
        guard bytes.count >= 2 else { return .rejected("header") }
        let selector = Int(bytes[1])
        let payload = Array(bytes[2...])
        var rng = SplitMix64(seedingFrom: bytes)
        let sender = fixture.senders[selector & 1]
        let wireFormat: WireFormat = selector & 2 != 0 ? .publicMessage : .privateMessage

        let messageBytes: [UInt8]
        switch Int(bytes[0]) % modeCount {
        case 0:
            var data = payload
            if selector & 4 != 0 {
                guard let fields = MarmotEventTarget.eventFields(payload),
                      let rumor = try? Rumor(pubkey: fields.pubkey, createdAt: fields.createdAt, kind: fields.kind, tags: fields.tags,
                                             content: fields.content)
                else { return .rejected("rumor") }
                data = rumor.jsonBytes
            }
            guard let message = try? fixture.protect(.application(data), sender: sender, wireFormat: .privateMessage,
                                                     confirmationTag: nil, using: &rng)
            else { return .rejected("protect") }
            messageBytes = message.tlsSerialized
        case 1:
            guard let proposal = try? Proposal(tlsSerialized: payload) else { return .rejected("proposal") }
            guard let message = try? fixture.protect(.proposal(proposal), sender: sender, wireFormat: wireFormat,
                                                     confirmationTag: nil, using: &rng)
            else { return .rejected("protect") }
            messageBytes = message.tlsSerialized
        case 2:
            var reader = TLSReader(payload)
            guard let commit = try? Commit(from: &reader), let tag = try? reader.readOpaque(), (try? reader.finish()) != nil else {
                return .rejected("commit")
            }
            guard let message = try? fixture.protect(.commit(commit), sender: sender, wireFormat: wireFormat,
                                                     confirmationTag: tag, using: &rng)
            else { return .rejected("protect") }
            messageBytes = message.tlsSerialized
        case 3:
            let template = fixture.contentTemplates[selector % fixture.contentTemplates.count]
            guard let body = edited(template.body, payload) else { return .rejected("edited body") }
            guard let message = try? fixture.protect(body, sender: fixture.senders[template.sender], wireFormat: template.wireFormat,
                                                     confirmationTag: template.confirmationTag, using: &rng)
            else { return .rejected("protect") }
            messageBytes = message.tlsSerialized
        default:
            if selector < fixture.messageTemplates.count {
                messageBytes = ByteEdits.apply(payload, to: fixture.messageTemplates[selector].bytes)
            } else {
                messageBytes = payload
            }
        }
        return try deliver(messageBytes, fixture, using: &rng)
    }

    /// The template's body with `script` applied to its encoding, decoded back; nil when the
    /// edited bytes are no longer a body of that type.
    static func edited(_ body: FramedContentBody, _ script: [UInt8]) -> FramedContentBody? {
        switch body {
        case .application(let data):
            return .application(ByteEdits.apply(script, to: data))
        case .proposal(let proposal):
            return (try? Proposal(tlsSerialized: ByteEdits.apply(script, to: proposal.tlsSerialized))).map { .proposal($0) }
        case .commit(let commit):
            return (try? Commit(tlsSerialized: ByteEdits.apply(script, to: commit.tlsSerialized))).map { .commit($0) }
        }
    }

    /// Seals `messageBytes` into a kind-445 event of the group and has a copy of the receiver
    /// process it.
    static func deliver(_ messageBytes: [UInt8], _ fixture: GroupEventFixture, using rng: inout SplitMix64) throws -> FuzzOutcome {
        let validated: ValidatedGroupEvent
        do {
            let event = try GroupEvent.seal(messageBytes: messageBytes, exporterSecret: fixture.exporterSecret,
                                            nostrGroupID: fixture.nostrGroupID, createdAt: GroupEventFixture.now, rng: &rng)
            validated = try GroupEvent.validate(event, now: GroupEventFixture.now)
        } catch {
            throw PropertyViolation(name, "a correctly sealed group event was refused: \(error)")
        }
        var receiver = fixture.receiver
        let decrypted: DecryptedGroupEvent
        do {
            decrypted = try receiver.decrypt(validated)
        } catch MarmotError.groupEventMessageDecoding {
            return .rejected("MLSMessage")
        } catch {
            throw PropertyViolation(name, "a group event sealed with the current exporter secret did not decrypt: \(error)")
        }
        let outcome: GroupEventOutcome
        do {
            outcome = try receiver.process(decrypted)
        } catch {
            guard receiver.mls.serialized() == fixture.receiverState else {
                throw PropertyViolation(name, "a refused message (\(caseName(error))) changed the group's state")
            }
            return .rejected(caseName(error))
        }
        switch outcome {
        case .application(let inner, _):
            _ = try? inner.content()
            return .accepted("application")
        case .proposalToCommit, .proposalKept, .proposalIgnored:
            return .accepted("proposal")
        case .hold, .stale, .duplicate, .ownEcho:
            // Outcomes that place nothing must change nothing.
            guard receiver.mls.serialized() == fixture.receiverState else {
                throw PropertyViolation(name, "an event that was not applied (\(outcome)) changed the group's state")
            }
            return .rejected("not applied")
        case .commit:
            guard receiver.epoch == 2 || !receiver.isActive else {
                throw PropertyViolation(name, "an accepted commit left the group in epoch \(receiver.epoch)")
            }
            let state = receiver.mls.serialized()
            guard (try? MLSGroup(serialized: state))?.serialized() == state else {
                throw PropertyViolation(name, "the group state after an accepted commit does not survive serialization")
            }
            return .accepted("commit")
        }
    }

    /// The error's case name (no associated values, which could be long).
    static func caseName(_ error: Error) -> String {
        if case MarmotError.mls(let inner) = error { return "mls." + caseName(inner) }
        return String(String(describing: error).prefix { $0 != "(" })
    }
}
