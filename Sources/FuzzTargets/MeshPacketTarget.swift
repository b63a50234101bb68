import Mesh
import SeededRandom

/// One mesh frame from the air (`Docs/protocols/mesh.md` sections 3, 4 and 8): the packet decoder, every
/// payload decoder on the decoded payload (whatever its signature: the router reaches them only
/// after the signature, the fuzzer should not need one), and a fresh router receiving the frame.
///
/// Properties: a decoded packet re-encodes to exactly the input (one encoding per packet, so
/// one id per packet); payloads that decode re-encode to themselves (announces: up to skipped
/// unknown TLVs, so decode ∘ encode is stable); a frame the router refuses leaves its store,
/// assemblies, pending forwards and deliveries as they were, and its seen-cache too unless the
/// refusal came after the signature verified (section 4 step 6).
public enum MeshPacketTarget: FuzzTarget {
    public static let name = "mesh-packet"
    static let now: UInt64 = 1_767_225_600_000

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        try routerProperty(bytes)
        let packet: UnverifiedPacket
        do {
            packet = try UnverifiedPacket.decode(bytes, feeds: true)
        } catch {
            return .rejected(error.rawValue)
        }
        guard packet.encoded == bytes else { throw PropertyViolation(name, "a decoded packet does not re-encode to its bytes") }
        try payloadProperties(packet.type, packet.payload)
        if (try? packet.verified()) != nil { return .accepted("verified.\(packet.type)") }
        return .accepted("packet.\(packet.type)")
    }

    static func payloadProperties(_ type: PacketType, _ payload: [UInt8]) throws {
        switch type {
        case .announce:
            if let announce = try? Announce.decode(payload) {
                guard let again = try? Announce.decode(announce.encoded()), again == announce else {
                    throw PropertyViolation(name, "an announce does not survive its encoder")
                }
            }
        case .syncRequest:
            if let request = try? SyncRequest.decode(payload), (try? request.encoded()) != payload {
                throw PropertyViolation(name, "a sync request does not re-encode to its bytes")
            }
        case .syncOffer:
            if let offer = try? SyncOffer.decode(payload), (try? offer.encoded()) != payload {
                throw PropertyViolation(name, "a sync offer does not re-encode to its bytes")
            }
        case .inviteBeacon:
            if let beacon = try? UnverifiedBeacon.decode(payload) {
                guard (try? beacon.verified(meshKey: [UInt8](repeating: 0, count: 32))) == nil || beacon.signature.count == 64 else {
                    throw PropertyViolation(name, "a beacon verified without a signature")
                }
            }
        case .joinHello, .joinChallenge, .joinRequest, .joinWelcome, .joinDone, .joinError:
            if let message = try? JoinMessage.decode(type: type, payload: payload), message.payload != payload {
                throw PropertyViolation(name, "a join message does not re-encode to its bytes")
            }
        case .nostrEvent:
            _ = try? CarriedEvent.verify(payload)
        case .dm, .leave, .feedRequest, .feedOffer, .feedChunk, .feedAck, .feedRange:
            // Opaque here: a feed payload is sealed between two contacts (feed.md 8.3).
            break
        }
    }

    static func routerProperty(_ bytes: [UInt8]) throws {
        var configuration = MeshConfiguration()
        configuration.announces = false
        configuration.feeds = true
        guard let key = try? MeshKey(seed: [UInt8](repeating: 0x42, count: 32)) else { throw PropertyViolation(name, "fixed key") }
        var router = MeshRouter(identity: MeshIdentity(key: key, now: now), configuration: configuration, now: now,
                                random: SplitMix64(seed: 1))
        router.linkUp(LinkID(1), mtu: 509, now: now)
        let before = (router.footprint.pending, router.footprint.store, router.footprint.assemblies, router.counters.delivered)
        let seenBefore = router.footprint.seen
        var actions: [MeshAction] = []
        if let refusal = router.receive(bytes, on: LinkID(1), now: now, actions: &actions) {
            let after = (router.footprint.pending, router.footprint.store, router.footprint.assemblies, router.counters.delivered)
            guard before == after, actions.isEmpty else { throw PropertyViolation(name, "a refused frame changed the router") }
            // Section 4: a packet whose signature verified enters the seen-cache (step 6) before
            // its payload is checked (step 8), so a replay is not checked twice. Nothing refused
            // earlier may touch it.
            let afterSignature: Set<MeshError> = [.rateLimited, .badPayload, .badEvent, .badBeacon, .duplicate]
            let grown = router.footprint.seen - seenBefore
            guard grown == 0 || (grown == 1 && afterSignature.contains(refusal)) else {
                throw PropertyViolation(name, "a frame refused before its signature entered the seen-cache")
            }
        }
    }
}

/// A run of fragment frames on one link (`Docs/protocols/mesh.md` section 5). The input is a sequence of
/// `length u16 ‖ frame`; each frame goes to one link's `Reassembler`, a millisecond apart.
///
/// Properties: a fragment header that decodes re-encodes to the frame; the link never holds
/// more than 4 assemblies or 128 KiB; a completed packet is the original type and its id
/// starts with the fragment id; a refused first fragment leaves nothing behind.
public enum MeshFragmentTarget: FuzzTarget {
    public static let name = "mesh-fragment"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        var reassembler = Reassembler()
        var offset = 0, now: UInt64 = 1_000_000
        var outcome = FuzzOutcome.rejected("empty")
        while offset + 2 <= bytes.count {
            let length = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
            let frame = Array(bytes[(offset + 2)..<min(bytes.count, offset + 2 + length)])
            offset += 2 + length
            now += 1
            let fragment: FragmentFrame
            do {
                fragment = try FragmentFrame.decode(frame)
            } catch {
                if case .rejected = outcome { outcome = .rejected(error.rawValue) }
                continue
            }
            guard fragment.encoded == frame else { throw PropertyViolation(name, "a fragment header does not re-encode") }
            let held = reassembler.count
            do {
                if let packet = try reassembler.add(fragment, now: now) {
                    guard packet.type == fragment.originalType, packet.id.id8.value == fragment.fragmentID else {
                        throw PropertyViolation(name, "a reassembled packet does not match its fragments")
                    }
                    outcome = .accepted("packet.\(packet.type)")
                } else if !outcome.isAccepted {
                    outcome = .accepted("fragment")
                }
            } catch let error as MeshError {
                guard reassembler.count <= held else { throw PropertyViolation(name, "a refused fragment started an assembly") }
                if !outcome.isAccepted { outcome = .rejected(error.rawValue) }
            }
            guard reassembler.count <= Reassembler.maxAssemblies, reassembler.bufferedBytes <= Reassembler.maxBufferedBytes else {
                throw PropertyViolation(name, "the link holds more than its assembly limits")
            }
        }
        return outcome
    }

    /// Frames in this target's input format.
    public static func input(_ frames: [[UInt8]]) -> [UInt8] {
        frames.flatMap { [UInt8($0.count >> 8), UInt8($0.count & 0xFF)] + $0 }
    }
}
