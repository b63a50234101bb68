import Pigeon

/// Pigeon frames from any transport (Docs/protocols/pigeon-dm.md section 3), delivered to a node that
/// holds an established session and a pending handshake (`PigeonFixture`). The first byte
/// picks the form: 0, the frame itself; 1, the rest as the content of a kind-1590 rumor
/// (base64 text, section 6.1).
///
/// Properties: a frame that parses keeps its bytes, and its type's size rule; a refusal is a
/// `PigeonError` (the engine is pure, so the node's state cannot have changed); an accepted
/// frame yields a state that survives its byte encoding, and a second delivery of the same
/// frame is refused or reported as a duplicate (never decrypted twice).
public enum PigeonFrameTarget: FuzzTarget {
    public static let name = "pigeon-frame"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let fixture = PigeonFixture.shared else { throw PropertyViolation(name, "fixture could not be made") }
        guard let mode = bytes.first else { return .rejected("empty") }
        var input = Array(bytes.dropFirst())
        if mode % 2 == 1 {
            guard let frame = try? NostrCarrier.frame(fromContent: String(decoding: input, as: UTF8.self)) else { return .rejected("base64") }
            input = frame
        }
        let frame: Frame
        do { frame = try Frame(bytes: input) } catch { return .rejected("frame") }
        guard frame.bytes == input, frame.body.count == input.count - Frame.headerLength else {
            throw PropertyViolation(name, "a parsed frame does not keep its bytes")
        }
        var keys = fixture.bobKeys
        let first: PigeonTransition<DeliverOutput>
        do {
            first = try fixture.bob.deliver(frame: input, now: fixture.now, keys: &keys)
        } catch {
            return .rejected("deliver.\(error.code)")
        }
        guard let decoded = try? PigeonState(encoded: first.state.encoded), decoded == first.state else {
            throw PropertyViolation(name, "a state after an accepted \(frame.type) does not survive its encoding")
        }
        if frame.type == .message, first.output.message != nil {
            var again = keys
            if let second = try? first.state.deliver(frame: input, now: fixture.now, keys: &again), second.output.message != nil {
                throw PropertyViolation(name, "a message frame decrypted twice")
            }
        }
        return .accepted("\(frame.type)\(first.output.duplicate ? ".duplicate" : "")\(first.output.held ? ".held" : "")")
    }
}

/// Contact cards (section 2.3) from users and peers. The first byte picks the form: 0, the
/// binary card; 1, the text form (`burrowcard1…`).
///
/// Properties: refusals are `bad_card` or `bad_signature` only; an accepted card re-encodes to
/// the input bytes, and its text and QR forms decode back to it.
public enum PigeonCardTarget: FuzzTarget {
    public static let name = "pigeon-card"

    public static func run(_ bytes: [UInt8]) throws -> FuzzOutcome {
        guard let mode = bytes.first else { return .rejected("empty") }
        let input = Array(bytes.dropFirst())
        let card: ContactCard
        do {
            card = mode % 2 == 0 ? try ContactCard(bytes: input) : try ContactCard(text: String(decoding: input, as: UTF8.self))
        } catch {
            guard error == .badCard || error == .badSignature else { throw PropertyViolation(name, "refused with \(error.code)") }
            return .rejected(error.code)
        }
        if mode % 2 == 0, card.bytes != input { throw PropertyViolation(name, "an accepted card does not keep its bytes") }
        guard (try? ContactCard(text: card.text)) == card, (try? ContactCard(text: card.qrText)) == card,
              (try? ContactCard(bytes: card.bytes)) == card
        else { throw PropertyViolation(name, "a card does not survive its text forms") }
        guard card.bytes.count >= ContactCard.minimumLength, card.bytes.count <= ContactCard.maximumLength,
              card.nickname.utf8.count <= ContactCard.maximumNicknameBytes, card.relays.count <= ContactCard.maximumRelays
        else { throw PropertyViolation(name, "an accepted card breaks a layout bound") }
        return .accepted(mode % 2 == 0 ? "card" : "card-text")
    }
}
