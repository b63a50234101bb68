import Crypto
import Feed
import Foundation
import Nostr
import Store

/// Writing the own feed and journal (feed.md 4.3): content checked against its type's table,
/// sealed for its audience with fresh randomness, signed, and committed with the new head in
/// one transaction before anything leaves the node.
extension FeedService {
    enum AuthorAudience {
        case contacts
        case journal
        case group(audience: String, epoch: UInt64, secret: [UInt8])

        var name: String {
            switch self {
            case .contacts: return "contacts"
            case .journal: return "self"
            case .group(let audience, _, _): return audience
            }
        }
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var rng = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    /// Seals, signs and stores one entry; the caller's transaction commits it.
    func author(type: String, content: FeedJSON, audience: AuthorAudience, identity: Identity, exchange: FeedKeyExchange,
                _ tx: StoreTransaction, now: Int64) throws -> Envelope {
        let plaintext: [UInt8]
        do {
            plaintext = try CanonicalJSON.serialize(content)
            _ = try FeedContent.validate(plaintext, type: type, authorIdentityKey: identity.identityKey)
        } catch {
            throw NodeError.invalidInput("this \(type.replacingOccurrences(of: "_", with: " ")) breaks the feed's rules (\(error))")
        }
        let timestamp = now / 1000
        let salt = Self.randomBytes(16)
        if case .journal = audience {
            let head = try tx.feeds.journal(limit: 1).first
            let sequence = try Self.next(head?.sequence)
            let binding = try Envelope.binding(audience: "self", feedID: identity.feedID, previous: head?.messageID, sequence: sequence,
                                               timestamp: timestamp, type: type)
            let blob = try FeedAudience.sealSelf(plaintext, journalKey: identity.journalKey, salt: salt, binding: binding)
            let envelope = try Envelope.sign(audience: "self", contentEncoded: blob, feedID: identity.feedID, previous: head?.messageID,
                                             sequence: sequence, timestamp: timestamp, type: type, identity: identity.signing)
            try tx.feeds.putJournal(sequence: Int64(sequence), messageID: envelope.messageID, timestamp: timestamp, type: type,
                                    envelope: envelope.bytes, contentJSON: plaintext)
            return envelope
        }
        let top = try tx.feeds.summary(feedID: identity.feedID).accepted?.upperBound
        let head = try top.flatMap { try tx.feeds.message(feedID: identity.feedID, sequence: $0) }
        let sequence = try Self.next(head?.sequence)
        let binding = try Envelope.binding(audience: audience.name, feedID: identity.feedID, previous: head?.messageID, sequence: sequence,
                                           timestamp: timestamp, type: type)
        let blob: [UInt8]
        switch audience {
        case .contacts:
            blob = try FeedAudience.sealContacts(plaintext, author: identity.feedID, recipients: try recipients(identity, tx), salt: salt,
                                                 cek: Self.randomBytes(32), binding: binding)
        case .group(_, let epoch, let secret):
            blob = try FeedAudience.sealGroup(plaintext, feedSecret: secret, epoch: epoch, salt: salt, binding: binding)
        case .journal:
            throw NodeError.internalError("the journal is written above")
        }
        let envelope = try Envelope.sign(audience: audience.name, contentEncoded: blob, feedID: identity.feedID, previous: head?.messageID,
                                         sequence: sequence, timestamp: timestamp, type: type, identity: identity.signing)
        guard envelope.bytes.count <= UnverifiedEnvelope.maximumBytes else { throw NodeError.invalidInput("the entry is over 64,000 bytes") }
        try tx.feeds.put(StoredFeedMessage(
            feedID: identity.feedID, sequence: Int64(sequence), messageID: envelope.messageID, timestamp: timestamp, type: type,
            audience: audience.name, envelope: envelope.bytes, accepted: true, contentStatus: "ok", contentJSON: plaintext, receivedAt: now))
        if type == "tombstone", let target = content["target_message"]?.string.flatMap({ Base64URL.decode($0, count: 32) }),
           var retracted = try tx.feeds.message(id: target), retracted.feedID == identity.feedID {
            retracted.contentStatus = "tombstoned"
            retracted.contentJSON = nil
            try tx.feeds.put(retracted)
            try tx.feeds.addTombstone(feedID: identity.feedID, target: target)
        }
        return envelope
    }

    static func next(_ sequence: Int64?) throws -> UInt32 {
        guard let sequence else { return 0 }
        guard let next = UInt32(exactly: sequence + 1), next <= 0xFFFF_FFFE else { throw NodeError.invalidInput("the feed is full") }
        return next
    }

    /// The contacts audience's recipients: the author (journal key) and every contact with an
    /// established pair key, the newest key each (5.2), at most 511 of them, newest first.
    func recipients(_ identity: Identity, _ tx: StoreTransaction) throws -> [(feedID: [UInt8], key: [UInt8])] {
        var newest: [[UInt8]: StoredPairKey] = [:]
        for key in try tx.feedKeys.pairKeys() where key.supersededAt == nil {
            if let held = newest[key.peerFeedID], held.establishedAt >= key.establishedAt { continue }
            newest[key.peerFeedID] = key
        }
        let chosen = newest.values.sorted { $0.establishedAt > $1.establishedAt }.prefix(Self.maximumRecipients)
        return [(identity.feedID, identity.journalKey)] + chosen.map { ($0.peerFeedID, $0.key) }
    }

    // MARK: Commands

    public enum PostAudience: Sendable, Equatable {
        case contacts, journal
        case group(String)

        public init(_ text: String) throws {
            switch text {
            case "contacts": self = .contacts
            case "self": self = .journal
            default:
                guard text.hasPrefix("group:"), text.count > 6 else {
                    throw NodeError.invalidInput("--audience takes contacts, self or group:GROUP, not \(text)")
                }
                self = .group(String(text.dropFirst(6)))
            }
        }
    }

    /// Writes one entry and publishes it through the relay carrier when that is on.
    func write(type: String, audience: PostAudience, timeout: Duration, _ content: (StoreTransaction, Identity) throws -> FeedJSON) async throws -> FeedEntryView {
        let now = Self.nowMilliseconds()
        let (envelope, view, publish) = try store.transaction { tx -> (Envelope, FeedEntryView, Bool) in
            let identity = try identity(tx)
            if audience != .journal, try catchingUp(tx) {
                throw NodeError.invalidInput(
                    "this home was restored from a backup and your feed is not back yet: meet a contact nearby (`burrow run --mesh …`) "
                        + "or turn on `feed relay on` and `sync`, then write again (writing now would make your contacts refuse your feed)")
            }
            let exchange = try exchange(identity, tx, now: now)
            let resolved: AuthorAudience
            switch audience {
            case .contacts: resolved = .contacts
            case .journal: resolved = .journal
            case .group(let name): resolved = try groupAudience(name, tx)
            }
            let envelope = try author(type: type, content: try content(tx, identity), audience: resolved, identity: identity, exchange: exchange,
                                      tx, now: now)
            let view = try entryView(ownEnvelope: envelope, identity: identity, tx)
            return (envelope, view, try relayCarrierOn(tx) && envelope.fields.audience != "self")
        }
        if publish { await publishToRelays([envelope], timeout: timeout) }
        return view
    }

    /// `group:GROUP`: the group's audience id and the feed secret of its current epoch (5.4),
    /// kept for reading the group's entries later.
    func groupAudience(_ name: String, _ tx: StoreTransaction) throws -> AuthorAudience {
        let loaded = try groups.resolveGroup(name, in: tx)
        let mls = loaded.group.mls
        let secret = try mls.exporter(label: FeedKeys.exporterLabel, context: FeedKeys.exporterContext, length: 32).unsafeBytes
        let audience = FeedKeys.groupAudience(mlsGroupID: mls.groupID)
        try tx.feedKeys.putGroupSecret(audience: audience, epoch: Int64(clamping: mls.epoch), secret: secret)
        return .group(audience: audience, epoch: mls.epoch, secret: secret)
    }

    /// A message id in base64url, or a unique prefix of at least 8 characters, among stored entries.
    /// An entry by the id `feed read` shows: 64 hex digits or a unique prefix of 8 or more
    /// (hex, so an id never starts with `-` and reads as an option). The envelope's base64url
    /// form is taken too, whole.
    func resolveEntry(_ text: String, _ tx: StoreTransaction) throws -> StoredFeedMessage {
        let lowered = text.lowercased()
        if let id = try? Hex.decode(lowered), id.count == 32, let row = try tx.feeds.message(id: id) { return row }
        if let id = Base64URL.decode(text, count: 32), let row = try tx.feeds.message(id: id) { return row }
        guard lowered.count >= 8, lowered.allSatisfy(\.isHexDigit) else { throw NodeError.invalidInput("no feed entry has the id \(text)") }
        var matches: [StoredFeedMessage] = []
        for feed in try tx.feeds.feeds() {
            matches += try tx.feeds.messages(feedID: feed.feedID).filter { Hex.encode($0.messageID).hasPrefix(lowered) }
        }
        guard matches.count == 1 else {
            throw NodeError.invalidInput(matches.isEmpty ? "no feed entry has the id \(text)" : "\(matches.count) feed entries start with \(text)")
        }
        return matches[0]
    }

    public func post(_ text: String, audience: PostAudience, replyTo: String?, mentions: [String], timeout: Duration) async throws -> FeedEntryView {
        guard !text.isEmpty, text.unicodeScalars.count <= 2000 else { throw NodeError.invalidInput("a post holds 1 to 2,000 characters") }
        return try await write(type: "post", audience: audience, timeout: timeout) { tx, _ in
            var members = [FeedJSONMember("body", .string(text)), FeedJSONMember("type", .string("post"))]
            if let replyTo { members.append(FeedJSONMember("reply_to", .string(Base64URL.encode(try resolveEntry(replyTo, tx).messageID)))) }
            if !mentions.isEmpty {
                let feeds = try mentions.map { FeedJSON.string(Base64URL.encode(FeedKeys.feedID(identityKey: try contactIdentity($0, tx)))) }
                members.append(FeedJSONMember("mentions", .array(feeds)))
            }
            return .object(members)
        }
    }

    public func react(to id: String, emoji: String, timeout: Duration) async throws -> FeedEntryView {
        try await write(type: "reaction", audience: .contacts, timeout: timeout) { tx, _ in
            .object([FeedJSONMember("emoji", .string(emoji)), FeedJSONMember("target_message", .string(Base64URL.encode(try resolveEntry(id, tx).messageID))),
                      FeedJSONMember("type", .string("reaction"))])
        }
    }

    public func profile(name: String?, timeout: Duration) async throws -> FeedEntryView {
        try await write(type: "profile_update", audience: .contacts, timeout: timeout) { _, _ in
            var members = [FeedJSONMember("type", .string("profile_update"))]
            if let name { members.append(FeedJSONMember("display_name", .string(name))) }
            return .object(members)
        }
    }

    public func retract(_ id: String, reason: String?, timeout: Duration) async throws -> FeedEntryView {
        if let reason, !["retracted", "error", "spam"].contains(reason) {
            throw NodeError.invalidInput("--reason takes retracted, error or spam")
        }
        return try await write(type: "tombstone", audience: .contacts, timeout: timeout) { tx, identity in
            let target = try resolveEntry(id, tx)
            guard target.feedID == identity.feedID else { throw NodeError.invalidInput("only your own entries can be retracted") }
            return .object([FeedJSONMember("reason", .string(reason ?? "retracted")), FeedJSONMember("target_message", .string(Base64URL.encode(target.messageID))),
                            FeedJSONMember("type", .string("tombstone"))])
        }
    }

    /// Introduces `contact` to `to`: its feed id, `S` and current ML-KEM key (6), readable by
    /// every contact (a contacts entry; the note says who it is for).
    public func introduce(_ contact: String, to: String, note: String?, timeout: Duration) async throws -> FeedEntryView {
        try await write(type: "contact_introduction", audience: .contacts, timeout: timeout) { tx, identity in
            let introduced = try contactIdentity(contact, tx)
            _ = try contactIdentity(to, tx)
            let exchange = try exchange(identity, tx)
            guard let bundle = exchange.record(of: introduced)?.bundle else {
                throw NodeError.invalidInput("\(contact) has not exchanged feed keys with you yet")
            }
            var members = [
                FeedJSONMember("introduced_dh_key", .string(Base64URL.encode(bundle.staticKey))),
                FeedJSONMember("introduced_feed_id", .string(Base64URL.encode(FeedKeys.feedID(identityKey: introduced)))),
                FeedJSONMember("introduced_pq_key", .string(Base64URL.encode(bundle.encapsulationKey))),
                FeedJSONMember("type", .string("contact_introduction")),
            ]
            if let note { members.append(FeedJSONMember("note", .string(note))) }
            return .object(members)
        }
    }

    /// A DM contact's identity key by name.
    func contactIdentity(_ name: String, _ tx: StoreTransaction) throws -> [UInt8] {
        let state = try directMessages.pigeon(tx)
        return try directMessages.resolveContact(name, in: state, tx).identityKey.bytes
    }
}

extension FeedService {
    /// Keeps the feed secret of every epoch of our groups this node still holds (5.4): members
    /// read entries of epochs they were in, so each epoch's secret is written while the MLS state
    /// still has it. Entries that waited for one are opened again. Returns whether any was new.
    @discardableResult
    func recordGroupSecrets() throws -> Bool {
        let added = try store.transaction { tx -> Bool in
            let known = Set(try tx.feedKeys.groupSecrets().map { "\($0.audience)/\($0.epoch)" })
            var added = false
            var current: [String: UInt64?] = [:]
            for row in try tx.groups.readable() {
                guard let loaded = try? LoadedGroup(row) else { continue }
                let mls = loaded.group.mls
                let audience = FeedKeys.groupAudience(mlsGroupID: mls.groupID)
                current[audience] = mls.isActive ? mls.epoch : nil as UInt64?
                for epoch in mls.retainedEpochs where !known.contains("\(audience)/\(epoch)") {
                    let secret = try mls.exporter(label: FeedKeys.exporterLabel, context: FeedKeys.exporterContext, length: 32, epoch: epoch)
                    try tx.feedKeys.putGroupSecret(audience: audience, epoch: Int64(clamping: epoch), secret: secret.unsafeBytes)
                    added = true
                }
            }
            try expireGroupSecrets(current: current, tx, now: Self.nowMilliseconds())
            return added
        }
        if added { try reopenWaiting() }
        return added
    }
}

extension FeedService {
    /// Group feed secrets are kept until 30 days after their epoch ended (5.4): an epoch ends
    /// when the group moves past it, when we are removed, or when the group is gone from this
    /// home. `current` holds each group's audience and its current epoch (nil once we are no
    /// longer a member); an audience not in it has ended. Secrets past their time are erased.
    func expireGroupSecrets(current: [String: UInt64?], _ tx: StoreTransaction, now: Int64) throws {
        for row in try tx.feedKeys.groupSecrets() where row.expiresAt == nil {
            let ended: Bool
            switch current[row.audience] {
            case .some(.some(let epoch)): ended = UInt64(exactly: row.epoch).map { $0 < epoch } ?? true
            case .some(.none), .none: ended = true
            }
            if ended { try tx.feedKeys.setGroupSecretExpiry(audience: row.audience, epoch: row.epoch, at: now + Self.keepSuperseded) }
        }
        try tx.feedKeys.eraseGroupSecrets(expiredBefore: now)
    }
}
