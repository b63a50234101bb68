import Foundation
import Nostr
import Pigeon
import Store

/// Pigeon direct messages on the node (Docs/protocols/pigeon-dm.md): the engine (`PigeonState`, sans-I/O) is
/// loaded from the store, stepped, and its changed records written back in the same
/// transaction as the message rows and the outbox frames; frames leave only from the outbox,
/// wrapped for the recipient's Nostr key (NIP-59, rumor kind 1590).
extension DirectMessageService {
    static func nowMilliseconds() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    // MARK: - The engine in the store

    /// The engine's state, or nil before the first DM use made an identity. Decoded once and
    /// kept while the store's version stamp says it is current (`PigeonStateCache`).
    func loadPigeon(_ tx: StoreTransaction) throws -> PigeonState? {
        let version = try tx.settings.get(Settings.pigeonStateVersion)
        if let version, let cached = pigeonCache.state(ifVersion: version) { return cached }
        guard let state = try decodePigeon(tx) else { return nil }
        if let version {
            pigeonCache.remember(state, version: version)
        } else {
            try stampPigeon(state, tx)
        }
        return state
    }

    /// Writes a new version stamp for `state`, the records just written in `tx`, and keeps it
    /// in the cache (a rolled-back stamp matches nothing later: it is random).
    private func stampPigeon(_ state: PigeonState, _ tx: StoreTransaction) throws {
        let version = PigeonStateCache.newVersion()
        try tx.settings.set(Settings.pigeonStateVersion, version)
        pigeonCache.remember(state, version: version)
    }

    private func decodePigeon(_ tx: StoreTransaction) throws -> PigeonState? {
        var records: [PigeonRecordKey: [UInt8]] = [:]
        for (text, value) in try tx.pigeonRecords.all() {
            guard let key = PigeonRecordKey(storeKey: text) else { throw StoreError.storeCorrupt("an unknown DM record") }
            records[key] = value
        }
        guard !records.isEmpty else { return nil }
        do {
            return try PigeonState(records: records)
        } catch {
            throw StoreError.storeCorrupt("the DM state does not decode (\(error))")
        }
    }

    /// The engine's state, making the DM identity (random `I` and `S`, not derived from the
    /// Nostr key) and the first card on first use.
    func pigeon(_ tx: StoreTransaction) throws -> PigeonState {
        if let state = try loadPigeon(tx) { return state }
        let identity = Ed25519PrivateKey.generate()
        let staticKey = X25519PrivateKey.generate()
        let card = try issueCard(identity: identity, staticKey: staticKey.publicKey, nickname: "", relays: try cardRelays(nil, tx))
        let state = PigeonState(local: try LocalIdentity(identityKey: identity, staticKey: staticKey, card: card))
        for (key, value) in state.records { try tx.pigeonRecords.set(key.description, value) }
        try stampPigeon(state, tx)
        return state
    }

    /// Writes what a transition changed.
    func save<Output>(_ transition: PigeonTransition<Output>, _ tx: StoreTransaction) throws {
        guard !transition.changes.isEmpty else { return }
        for key in transition.changes { try tx.pigeonRecords.set(key.description, transition.state.record(key)) }
        try stampPigeon(transition.state, tx)
    }

    private func issueCard(identity: Ed25519PrivateKey, staticKey: X25519PublicKey, nickname: String, relays: [String]) throws -> ContactCard {
        var rng = SystemRandomNumberGenerator()
        let aux = (0..<32).map { _ in UInt8.random(in: 0...255, using: &rng) }
        return try ContactCard.issue(identity: identity, staticKey: staticKey, nostr: keys, auxRand: aux,
                                     createdAt: Self.nowMilliseconds(), nickname: nickname, relays: relays)
    }

    /// The relays a card names: those given, else the first four configured that fit a card.
    private func cardRelays(_ given: [String]?, _ tx: StoreTransaction) throws -> [String] {
        if let given {
            guard given.count <= ContactCard.maximumRelays else {
                throw NodeError.invalidInput("a card names at most \(ContactCard.maximumRelays) relays")
            }
            return try given.map { text in
                let url = try BurrowNode.relayURL(text).string
                guard Self.fitsCard(url) else { throw NodeError.invalidInput("\(url) cannot be named in a card (1–100 printable ASCII bytes)") }
                return url
            }
        }
        let configured = try tx.relays.list().map(\.url)
        let ours = configured.isEmpty ? [BurrowNode.embeddedRelay] : configured
        return Array(ours.filter(Self.fitsCard).prefix(ContactCard.maximumRelays))
    }

    private static func fitsCard(_ url: String) -> Bool {
        let bytes = Array(url.utf8)
        return (1...ContactCard.maximumRelayURLBytes).contains(bytes.count) && bytes.allSatisfy { (0x21...0x7E).contains($0) }
    }

    // MARK: - Card and contacts

    /// The own card, reissued (created_at = max(now, previous + 1)) when the nickname or the
    /// relays changed; contacts with a session are sent the new one (content kind 3).
    public func contactCard(nickname: String?, relays given: [String]?, timeout: Duration) async throws -> CardView {
        if let nickname, nickname.utf8.count > ContactCard.maximumNicknameBytes {
            throw NodeError.invalidInput("a nickname holds at most \(ContactCard.maximumNicknameBytes) bytes")
        }
        let (card, changed) = try store.transaction { tx -> (ContactCard, Bool) in
            let state = try pigeon(tx)
            let current = state.local.card
            let relays = try cardRelays(given, tx)
            let name = nickname ?? current.nickname
            guard name != current.nickname || relays != current.relays else { return (current, false) }
            let card = try current.reissued(identity: state.local.identityKey, staticKey: state.local.staticKey.publicKey,
                                            now: Self.nowMilliseconds(), nickname: name, relays: relays)
            let replaced = try state.replaceOwnCard(card)
            try save(replaced, tx)
            // Tell every contact we have a session with.
            var engine = replaced.state
            let now = Self.nowMilliseconds()
            for contact in engine.contacts.values.sorted(by: { $0.identityKey < $1.identityKey })
            where engine.currentSession(with: contact.identityKey) != nil {
                let content = try MessageContent(kind: MessageContent.Kind.card.rawValue, msgID: Self.randomMessageID(), sentAt: now, body: card.bytes)
                let sent = try engine.send(to: contact.identityKey, content: content, now: now)
                try save(sent, tx)
                try queueFrames(sent.output.frames, to: contact, msgID: nil, tx)
                engine = sent.state
            }
            return (card, true)
        }
        if changed { await flushDMOutbox(timeout: timeout) }
        return cardView(card)
    }

    func cardView(_ card: ContactCard) -> CardView {
        CardView(card: card.text, qrText: card.text.uppercased(), identity: card.identityKey.hex, staticKey: Hex.encode(card.staticKey.bytes),
                 pubkey: card.nostrKey.hex, npub: card.nostrKey.npub, nickname: card.nickname, relays: card.relays, createdAt: card.createdAt)
    }

    /// Verifies and stores a card (`contact add`). A known identity's newer card replaces its
    /// old one (an older one is `card_outdated`); a changed Nostr key clears the verified mark.
    public func addContact(card text: String, name: String?) throws -> ContactView {
        let card = try ContactCard(text: text.trimmingCharacters(in: .whitespacesAndNewlines))
        return try store.transaction { tx in
            let state = try pigeon(tx)
            guard card.identityKey != state.local.identityKey.publicKey else {
                throw NodeError.invalidInput("this is our own card")
            }
            let added = try state.addContact(card)
            try save(added, tx)
            let identity = card.identityKey.bytes
            if let name {
                try setContactName(name, identity: identity, tx)
            } else if try tx.dmContacts.name(identity: identity).map({ $0.hasPrefix(Self.requestNamePrefix) }) ?? true {
                // New, or a request named by its key until now: the card's nickname.
                try setContactName(try defaultName(for: card, tx), identity: identity, tx)
            }
            return try contactView(added.output, state: added.state, tx)
        }
    }

    /// The name a contact request carries until the user adds it.
    static let requestNamePrefix = "request-"

    private func setContactName(_ name: String, identity: [UInt8], _ tx: StoreTransaction) throws {
        let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= 64 else { throw NodeError.invalidInput("a contact name holds 1–64 bytes") }
        if let holder = try tx.dmContacts.identity(name: trimmed), holder != identity {
            throw NodeError.invalidInput("another contact is already called \(trimmed)")
        }
        try tx.dmContacts.set(identity: identity, name: trimmed, at: Self.now())
    }

    /// The card's nickname, else `contact-` and 8 hex digits of `I` (numbered if taken).
    private func defaultName(for card: ContactCard, _ tx: StoreTransaction) throws -> String {
        let base = card.nickname.isEmpty ? "contact-" + String(card.identityKey.hex.prefix(8)) : card.nickname
        var candidate = base
        var n = 2
        while let holder = try tx.dmContacts.identity(name: candidate), holder != card.identityKey.bytes {
            candidate = "\(base)-\(n)"
            n += 1
        }
        return candidate
    }

    public func contacts() throws -> [ContactView] {
        try store.transaction { tx in
            guard let state = try loadPigeon(tx) else { return [] }
            return try state.contacts.values.map { try contactView($0, state: state, tx) }.sorted { $0.name < $1.name }
        }
    }

    /// CONTACT: a name, a unique prefix (≥ 8 hex) of its identity key, or its Nostr key.
    func resolveContact(_ text: String, in state: PigeonState, _ tx: StoreTransaction) throws -> Contact {
        let query = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if let identity = try tx.dmContacts.identity(name: query), let key = try? Ed25519PublicKey(bytes: identity),
           let contact = state.contacts[key] {
            return contact
        }
        if let nostr = try? (query.hasPrefix("npub1") ? PublicKey(npub: query) : PublicKey(hex: query)) {
            let matches = state.contacts.values.filter { $0.card.nostrKey == nostr }
            if matches.count == 1, let only = matches.first { return only }
            if matches.count > 1 { throw NodeError.ambiguousContact("several contacts use the Nostr key \(nostr.hex)") }
        }
        let lower = query.lowercased()
        if lower.count >= 8, lower.allSatisfy(\.isHexDigit) {
            let matches = state.contacts.values.filter { $0.identityKey.hex.hasPrefix(lower) }
            if matches.count == 1, let only = matches.first { return only }
            if matches.count > 1 { throw NodeError.ambiguousContact("\(query) names \(matches.count) contacts") }
        }
        throw NodeError.unknownContact("no contact matches \(query)")
    }

    public func contact(_ text: String) throws -> ContactView {
        try store.transaction { tx in
            guard let state = try loadPigeon(tx) else { throw NodeError.unknownContact("no contact matches \(text)") }
            return try contactView(try resolveContact(text, in: state, tx), state: state, tx)
        }
    }

    /// The safety number with CONTACT, and the contact marked verified when `confirm` is set or
    /// `match` equals it (spaces ignored; else `safety_number_mismatch`); `unverify` clears it.
    public func verifyContact(_ text: String, match: String?, confirm: Bool, unverify: Bool) throws -> (ContactView, String) {
        try store.transaction { tx in
            guard let state = try loadPigeon(tx) else { throw NodeError.unknownContact("no contact matches \(text)") }
            let contact = try resolveContact(text, in: state, tx)
            let number = SafetyNumber(state.local.card, contact.card)
            var current = state
            if let match, !number.matches(match) {
                throw NodeError.safetyNumberMismatch("the digits given are not the safety number with \(try name(of: contact, tx))")
            }
            if unverify || confirm || match != nil {
                let marked = try state.setVerified(contact.identityKey, !unverify, now: Self.nowMilliseconds())
                try save(marked, tx)
                current = marked.state
            }
            let updated = current.contacts[contact.identityKey] ?? contact
            return (try contactView(updated, state: current, tx), number.grouped)
        }
    }

    public func removeContact(_ text: String) throws -> ContactView {
        let (view, identity) = try store.transaction { tx -> (ContactView, [UInt8]) in
            guard let state = try loadPigeon(tx) else { throw NodeError.unknownContact("no contact matches \(text)") }
            let contact = try resolveContact(text, in: state, tx)
            let view = try contactView(contact, state: state, tx)
            let removed = try state.removeContact(contact.identityKey)
            try save(removed, tx)
            try tx.dmContacts.delete(identity: contact.identityKey.bytes)
            try tx.dmOutbox.deleteAll(contact: contact.identityKey.bytes)
            return (view, contact.identityKey.bytes)
        }
        do { try feedKeys.current?.removed(identity) } catch {
            logger.warning("the feed was not re-keyed after a removal", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        return view
    }

    func name(of contact: Contact, _ tx: StoreTransaction) throws -> String {
        try tx.dmContacts.name(identity: contact.identityKey.bytes) ?? "contact-" + String(contact.identityKey.hex.prefix(8))
    }

    func contactView(_ contact: Contact, state: PigeonState, _ tx: StoreTransaction) throws -> ContactView {
        let session = state.currentSession(with: contact.identityKey).map {
            ContactView.SessionSummary(id: $0.id.hex, role: $0.role == .initiator ? "initiator" : "responder",
                                       establishedAt: $0.establishedAt, confirmed: $0.confirmed)
        }
        return ContactView(
            name: try name(of: contact, tx), identity: contact.identityKey.hex, pubkey: contact.card.nostrKey.hex,
            npub: contact.card.nostrKey.npub, nickname: contact.card.nickname, relays: contact.card.relays,
            state: contact.state == .added ? "added" : "request", verified: contact.isVerified, verifiedAt: contact.verifiedAt,
            cardCreatedAt: contact.card.createdAt, session: session)
    }

    static func randomMessageID() -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// This node's Pigeon identity key (mesh DMs to its daily tag are ours), if it has one.
    public func meshDMIdentityKeys() -> [[UInt8]] {
        guard let key = try? store.transaction({ try loadPigeon($0)?.local.identityKey.publicKey.bytes }) else { return [] }
        return [key]
    }
}
