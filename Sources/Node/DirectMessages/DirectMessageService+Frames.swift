import Foundation
import Mesh
import Nostr
import Pigeon
import RelayClient
import Store

/// Sending, receiving and carrying DM frames (Docs/protocols/pigeon-dm.md sections 4, 6.1, 7, 8).
extension DirectMessageService {
    /// Seconds between resends of an unanswered handshake1 by `sync` and `run`'s upkeep (it
    /// stays valid 24 h; `dm send` itself sends at once).
    static let handshakeResendInterval: Int64 = 300

    // MARK: - Sending

    /// Starts (or re-sends) a handshake with `contact`: the pending state and the outbox row
    /// commit before handshake1 leaves.
    func startHandshake(with contact: Contact, state: PigeonState, now: UInt64, _ tx: StoreTransaction) throws {
        var keys = SystemKeySource()
        let started = try state.start(with: contact.identityKey, now: now, keys: &keys)
        try save(started, tx)
        try queueFrames([started.output.frame], to: contact, msgID: nil, tx)
    }

    /// Encrypts every queued message to `identity` on its current session: each ratchet step
    /// commits with its outbox frames, in this transaction, before any transport sees them.
    @discardableResult
    func encryptQueued(for identity: Ed25519PublicKey, state: PigeonState, now: UInt64, _ tx: StoreTransaction) throws -> PigeonState {
        guard let contact = state.contacts[identity], state.currentSession(with: identity) != nil else { return state }
        var current = state
        for var message in try tx.dmMessages.queued(contact: identity.bytes) {
            let content = try MessageContent(kind: UInt8(message.kind), msgID: message.msgID, sentAt: UInt64(clamping: message.sentAt), body: message.body)
            let sent = try current.send(to: identity, content: content, now: now)
            try save(sent, tx)
            try queueFrames(sent.output.frames, to: contact, msgID: message.msgID, tx)
            message.sessionID = sent.output.sessionID.bytes
            try tx.dmMessages.update(message)
            current = sent.state
        }
        return current
    }

    /// Queues frames for `contact`. Only the message frame carries `msgID`: a handshake3 sent
    /// ahead of it (an unconfirmed session) being accepted does not make the message `sent`.
    func queueFrames(_ frames: [[UInt8]], to contact: Contact, msgID: [UInt8]?, _ tx: StoreTransaction) throws {
        for frame in frames {
            let isMessage = frame.count > 1 && frame[1] == FrameType.message.rawValue
            try tx.dmOutbox.insert(recipient: contact.card.nostrKey.bytes, contact: contact.identityKey.bytes, frame: frame,
                                   msgID: isMessage ? msgID : nil, at: Self.now())
        }
    }

    /// Publishes the pending frames that are due, each in a fresh gift wrap to its recipient's
    /// Nostr key, to the relays of the contact's card, else its inbox relays (10050), else ours;
    /// and, when `run` has the mesh up, once as a mesh DM to the contact's daily tag
    /// (Docs/protocols/pigeon-dm.md 6.2). A frame is `sent` (its message too) when a relay accepted it — or,
    /// with `--via mesh`, when the mesh took it (it stores and forwards for 24 h). With `auto`, a
    /// frame the mesh carried stays owed to the relays until one accepts it: the contact may not
    /// be near. `route` (`dm send --via`) applies to its contact's frames only (`DMRoute`).
    ///
    /// Bounded by `DMOutboxPolicy`: one deadline (`timeout`) for the whole flush, recipients in
    /// parallel, contacts' frames first; a failed frame backs off, and expires or is given up.
    func flushDMOutbox(timeout: Duration, route: DMRoute? = nil) async {
        let now = Self.now()
        guard let frames = try? store.transaction({ tx -> [StoredDMFrame] in
            try tx.dmOutbox.expire(handshakesBefore: now - DMOutboxPolicy.handshakeLifetime,
                                   messagesBefore: now - DMOutboxPolicy.messageLifetime, maxAttempts: DMOutboxPolicy.maxAttempts)
            return try tx.dmOutbox.due(at: now, limit: DMOutboxPolicy.framesPerFlush)
        }), !frames.isEmpty else { return }
        let deadline = ContinuousClock.now.advanced(by: timeout)
        // One batch per recipient, in the order the outbox gave them (contacts first).
        var batches: [[StoredDMFrame]] = []
        var batchIndex: [[UInt8]: Int] = [:]
        for frame in frames {
            if let index = batchIndex[frame.recipient] {
                batches[index].append(frame)
            } else {
                batchIndex[frame.recipient] = batches.count
                batches.append([frame])
            }
        }
        await withTaskGroup(of: Void.self) { group in
            var running = 0
            for batch in batches {
                if running >= DMOutboxPolicy.concurrentRecipients {
                    await group.next()
                    running -= 1
                }
                group.addTask { await self.flushDMFrames(batch, route: route, deadline: deadline) }
                running += 1
            }
        }
    }

    /// One recipient's frames, in order, until the flush's deadline.
    private func flushDMFrames(_ frames: [StoredDMFrame], route: DMRoute?, deadline: ContinuousClock.Instant) async {
        var urls: [String]?
        for frame in frames {
            let remaining = deadline - ContinuousClock.now
            guard remaining > .zero else { return }  // left pending, not counted as an attempt
            let via = route?.via(for: frame) ?? .auto
            let mesh = via == .nostr ? nil : self.mesh
            var carried = meshCarriedFrames.withLock { $0.contains(frame.id) }
            if let mesh, let contact = frame.contact, !carried {
                do {
                    try await mesh.sendDM(frame.frame, toIdentityKey: contact)
                    carried = true
                    meshCarriedFrames.withLock { carriedFrames in
                        if carriedFrames.count >= DMOutboxPolicy.framesPerFlush * 4 { carriedFrames.removeAll() }
                        carriedFrames.insert(frame.id)
                    }
                } catch {
                    logger.debug("DM frame not carried by the mesh", metadata: ["error": "\(BurrowNode.describe(error))"])
                }
            }
            do {
                guard let recipient = try? PublicKey(bytes: frame.recipient) else {
                    _ = try? store.transaction { try $0.dmOutbox.setState(id: frame.id, carried ? .sent : .failed, attempted: carried) }
                    continue
                }
                if via == .mesh {
                    guard carried else { throw NodeError.noRoute("the mesh did not take the frame") }
                } else {
                    let route: [String]
                    if let urls {
                        route = urls
                    } else {
                        route = try await dmRoute(to: recipient, contact: frame.contact, timeout: remaining)
                        urls = route
                    }
                    var rng = SystemRandomNumberGenerator()
                    let now = Self.now()
                    let rumor = try NostrCarrier.rumor(frame: frame.frame, sender: publicKey, now: now)
                    let wrap = try GiftWrap.wrap(rumor: rumor, sender: keys, recipient: recipient, now: now, rng: &rng,
                                                 extraTags: [["expiration", String(NostrCarrier.expiration(for: frame.frame, now: now))]])
                    try await publishToMailbox(wrap, to: route, deadline: deadline)
                }
                Failpoint.dmPublished.check()
                try store.transaction { tx in
                    try tx.dmOutbox.setState(id: frame.id, .sent, attempted: true)
                    if let msgID = frame.msgID, let contact = frame.contact,
                       var message = try tx.dmMessages.get(contact: contact, direction: .outgoing, msgID: msgID), message.status == .queued {
                        message.status = .sent
                        try tx.dmMessages.update(message)
                    }
                }
            } catch {
                let retryAt = Self.now() + DMOutboxPolicy.retryDelay(afterAttempts: frame.attempts + 1)
                _ = try? store.transaction { try $0.dmOutbox.deferAttempt(id: frame.id, until: retryAt) }
                logger.warning(carried ? "DM frame carried by the mesh, still owed to the relays" : "DM frame not published yet",
                               metadata: ["error": "\(BurrowNode.describe(error))"])
            }
        }
    }

    /// What burrow-relay answers while a recipient's mailbox is at its quota (Relays/README).
    static let mailboxFullAnswer = "rate-limited: mailbox full"

    /// Publishes a gift wrap; while the recipient's mailbox is full (a flood the recipient is
    /// still emptying), tries again, 200 ms doubling to 2 s, until `deadline`.
    func publishToMailbox(_ wrap: Event, to urls: [String], deadline: ContinuousClock.Instant) async throws {
        var pause: Duration = .milliseconds(200)
        while true {
            let results = try await gateway.pool(urls).publish(wrap, timeout: max(.milliseconds(1), deadline - ContinuousClock.now))
            if results.contains(where: \.accepted) { return }
            guard results.contains(where: { $0.message.hasPrefix(Self.mailboxFullAnswer) }),
                  deadline - ContinuousClock.now > pause else { throw RelayGateway.publishFailure(results, eventID: wrap.id) }
            try await Task.sleep(for: pause)
            pause = min(pause * 2, .seconds(2))
        }
    }

    /// Where a gift wrap to `recipient` goes (section 6.1): the contact's card relays, else at
    /// most `DMOutboxPolicy.maxInboxRelays` of its inbox relays (10050) — the ones we share
    /// first, and none on a private network unless one of ours is (a home or test setup) —
    /// else ours.
    func dmRoute(to recipient: PublicKey, contact: [UInt8]?, timeout: Duration) async throws -> [String] {
        let ours = try relays()
        if let contact, let key = try? Ed25519PublicKey(bytes: contact),
           let card = try store.transaction({ tx in try loadPigeon(tx)?.contacts[key]?.card }), !card.relays.isEmpty {
            return card.relays
        }
        if !ours.isEmpty,
           let lists = try? await gateway.fetchEvents(Filter(authors: [recipient], kinds: [InboxRelayList.kind]), from: ours, timeout: timeout),
           let newest = lists.max(by: { $0.createdAt < $1.createdAt }) {
            let inbox = Self.inboxRoute(InboxRelayList.relays(newest), ours: ours)
            if !inbox.isEmpty { return inbox }
        }
        guard !ours.isEmpty else { throw NodeError.noRoute("no relay reaches the contact: their card names none and we have none") }
        return ours
    }

    /// The relays of someone else's inbox list we are willing to dial (see `dmRoute`).
    static func inboxRoute(_ listed: [String], ours: [String]) -> [String] {
        let ourURLs = Set(ours.compactMap { try? RelayURL.dialable($0) })
        let allowPrivate = ourURLs.contains(where: \.isPrivateNetwork)
        var shared: [String] = [], others: [String] = []
        var seen: Set<RelayURL> = []
        for text in listed {
            guard let url = try? RelayURL.dialable(text), seen.insert(url).inserted else { continue }
            guard allowPrivate || !url.isPrivateNetwork else { continue }
            if ourURLs.contains(url) { shared.append(url.description) } else { others.append(url.description) }
        }
        return Array((shared + others).prefix(DMOutboxPolicy.maxInboxRelays))
    }

    // MARK: - Receiving

    /// One DM frame from a gift wrap sealed by `sender`: stepped through the engine; its state
    /// changes, the message, the replies and the wrap's processed mark commit together.
    func handleDMFrame(_ unwrapped: UnwrappedGift, wrapID: EventID, report: inout SyncReport) throws {
        let frame: [UInt8]
        do throws(PigeonError) { frame = try NostrCarrier.frame(from: unwrapped.rumor) } catch {
            throw DMRefusal(code: error)
        }
        _ = try deliverDMFrame(frame, from: .nostr(unwrapped.sender), processedMark: wrapID, report: &report)
    }

    /// Where the replies to a received frame go: back to the Nostr key that sealed its gift wrap
    /// (through the DM outbox), or straight back to the mesh id that sent its packet (a
    /// handshake2 cannot be addressed to a DM tag: XX reveals the initiator only in message 3).
    enum DMReplyRoute {
        case nostr(PublicKey)
        case mesh(MeshID)
    }

    /// Whose budget a frame from `route` counts against: a gift wrap sealed by an added
    /// contact's `N` is a contact's; anything else (other seal signers, mesh senders, whose
    /// identity the handshake has not revealed yet) a stranger's.
    func origin(of route: DMReplyRoute, in state: PigeonState) -> FrameOrigin {
        switch route {
        case .nostr(let sender):
            let isContact = state.contacts.values.contains { $0.state == .added && $0.card.nostrKey == sender }
            return isContact ? .contact : .stranger(budgetKey: sender.bytes)
        case .mesh(let sender):
            return .stranger(budgetKey: sender.bytes)
        }
    }

    /// The engine step shared by both carriers. Returns the replies for `.mesh` (the caller
    /// sends them once this transaction has committed); for `.nostr` they are queued.
    func deliverDMFrame(_ frame: [UInt8], from route: DMReplyRoute, processedMark: EventID?, report: inout SyncReport) throws -> [[UInt8]] {
        let now = Self.nowMilliseconds()
        let (updates, meshReplies) = try store.transaction { tx -> ([NodeUpdate], [[UInt8]]) in
            let state = try pigeon(tx)
            var keys = SystemKeySource()
            let delivered: PigeonTransition<DeliverOutput>
            do throws(PigeonError) {
                delivered = try state.deliver(frame: frame, now: now, keys: &keys, origin: origin(of: route, in: state))
            } catch {
                if case .nostr(let sender) = route {
                    try recoverLostSession(after: error, frame: frame, sender: sender, state: state, now: now, tx)
                }
                throw DMRefusal(code: error)
            }
            try save(delivered, tx)
            var current = delivered.state
            let out = delivered.output
            var updates: [NodeUpdate] = []
            var meshReplies: [[UInt8]] = []
            // Replies (handshake2, a repeated handshake3) go back to whoever sent the frame.
            // A repeated frame is answered at most once more (a lost answer), never again.
            for reply in out.outputs {
                if out.duplicate, try tx.dmOutbox.count(frame: reply) >= 2 { continue }
                switch route {
                case .nostr(let sender):
                    let contact = current.contacts.values.first { $0.card.nostrKey == sender }
                    try tx.dmOutbox.insert(recipient: sender.bytes, contact: contact?.identityKey.bytes, frame: reply, msgID: nil,
                                           at: Self.now())
                    if contact == nil { try tx.dmOutbox.capStrangerRows(DMOutboxPolicy.maxStrangerRows) }
                case .mesh:
                    meshReplies.append(reply)
                }
            }
            if let established = out.established {
                if out.contactRequest, let contact = current.contacts[established.contact],
                   try tx.dmContacts.name(identity: established.contact.bytes) == nil {
                    try setRequestName(for: contact, tx)
                }
                if out.contactRequest { current = try evictOldRequests(keeping: established.contact, state: current, tx) }
                if let contact = current.contacts[established.contact] {
                    updates.append(.contact(try contactView(contact, state: current, tx)))
                }
                current = try encryptQueued(for: established.contact, state: current, now: now, tx)
            }
            var received: [ReceivedMessage] = out.message.map { [$0] } ?? []
            received += out.released.compactMap { try? $0.result.get() }
            for message in received {
                if let update = try store(message, state: current, now: now, tx) { updates.append(update) }
            }
            if out.ackDue, let identity = out.established?.contact ?? received.first?.contact {
                let ack = try MessageContent(kind: MessageContent.Kind.ack.rawValue, msgID: Self.randomMessageID(), sentAt: now, body: [])
                if let contact = current.contacts[identity], current.currentSession(with: identity) != nil {
                    let sent = try current.send(to: identity, content: ack, now: now)
                    try save(sent, tx)
                    try queueFrames(sent.output.frames, to: contact, msgID: nil, tx)
                    current = sent.state
                }
            }
            if let processedMark {
                try tx.processedEvents.mark(eventID: processedMark.bytes, outcome: out.duplicate ? "duplicate DM frame" : "DM frame", at: Self.now())
            }
            return (updates, meshReplies)
        }
        Failpoint.dmReceived.check()
        report.processed += 1
        report.updates += updates
        for case .dm(let message) in updates where message.direction == "in" { report.messages += 1 }
        return meshReplies
    }

    /// Asks the relays holding our mailbox to delete the gift wraps to us that are processed,
    /// whatever the outcome (section 6.3: a kind-5 by the recipient, on a connection
    /// authenticated as it, empties burrow-relay's mailbox; junk and refused wraps must not
    /// fill its quota). Each relay is told only of the wraps it returned (`sources`, when the
    /// fetch knows them), and only our own relays are told. Best effort.
    func deleteSettledWraps(_ ids: [EventID], sources: [EventID: [String]] = [:], timeout: Duration) async {
        guard !ids.isEmpty, let ours = try? relays(), !ours.isEmpty else { return }
        var byRelay: [String: [EventID]] = [:]
        for id in ids {
            for url in sources[id].map({ held in ours.filter(held.contains) }) ?? ours { byRelay[url, default: []].append(id) }
        }
        var rng = SystemRandomNumberGenerator()
        for (url, relayIDs) in byRelay.sorted(by: { $0.key < $1.key }) {
            do {
                for chunk in stride(from: 0, to: relayIDs.count, by: 500) {
                    let tags = relayIDs[chunk..<min(chunk + 500, relayIDs.count)].map { ["e", $0.hex] } + [["k", String(Kind.giftWrap)]]
                    let deletion = try Event.sign(kind: 5, content: "", tags: tags, createdAt: Self.now(), keys: keys, rng: &rng)
                    _ = try await gateway.pool([url]).publish(deletion, timeout: timeout)
                }
            } catch {
                logger.debug("mailbox deletion not sent", metadata: ["error": "\(BurrowNode.describe(error))"])
            }
        }
    }

    /// A message frame for a session we do not have, sealed by a contact's Nostr key: the peer
    /// kept a session we lost, so a new handshake starts (at most once per 24 h per contact).
    private func recoverLostSession(after error: PigeonError, frame: [UInt8], sender: PublicKey, state: PigeonState, now: UInt64,
                                    _ tx: StoreTransaction) throws {
        guard error == .sessionUnknown, frame.count > 1, frame[1] == FrameType.message.rawValue,
              let contact = state.contacts.values.first(where: { $0.card.nostrKey == sender }),
              let due = state.recoveryHandshakeDue(for: contact.identityKey, now: now), due.output else { return }
        try save(due, tx)
        try startHandshake(with: contact, state: due.state, now: now, tx)
    }

    /// At most `maxContactRequests` contact requests (strangers whose handshake completed and
    /// whom the user has not added): the oldest requests go, with their sessions, messages and
    /// frames; an added contact is never evicted.
    func evictOldRequests(keeping newest: Ed25519PublicKey, state: PigeonState, _ tx: StoreTransaction) throws -> PigeonState {
        let requests = state.contacts.values.filter { $0.state == .request && $0.identityKey != newest }
        guard requests.count >= Self.maxContactRequests else { return state }
        func since(_ contact: Contact) -> UInt64 { state.sessions(with: contact.identityKey).map(\.establishedAt).max() ?? 0 }
        var current = state
        for contact in requests.sorted(by: { (since($0), $0.identityKey) < (since($1), $1.identityKey) })
            .prefix(requests.count - Self.maxContactRequests + 1) {
            let removed = try current.removeContact(contact.identityKey)
            try save(removed, tx)
            current = removed.state
            try tx.dmContacts.delete(identity: contact.identityKey.bytes)
            try tx.dmOutbox.deleteAll(contact: contact.identityKey.bytes)
            try tx.dmMessages.deleteAll(contact: contact.identityKey.bytes)
        }
        return current
    }

    /// Contact requests kept at once (finding 5 of issue 19).
    static let maxContactRequests = 100

    /// A contact request is named by its key (`request-` and 8 hex digits of `I`), never by the
    /// nickname its card claims: a stranger calling itself "alice" must not take the name
    /// `dm send alice` resolves (added contacts are named when the user adds them).
    private func setRequestName(for contact: Contact, _ tx: StoreTransaction) throws {
        let base = Self.requestNamePrefix + String(contact.identityKey.hex.prefix(8))
        var candidate = base
        var n = 2
        while try tx.dmContacts.identity(name: candidate) != nil {
            candidate = "\(base)-\(n)"
            n += 1
        }
        try tx.dmContacts.set(identity: contact.identityKey.bytes, name: candidate, at: Self.now())
    }

    /// Stores what a decrypted message means: a text, receipts for our messages, a new card
    /// (already applied by the engine). Returns the update `run` prints.
    private func store(_ message: ReceivedMessage, state: PigeonState, now: UInt64, _ tx: StoreTransaction) throws -> NodeUpdate? {
        guard let content = message.content else { return nil }
        switch content.knownKind {
        case .text:
            let row = StoredDM(contact: message.contact.bytes, direction: .incoming, msgID: content.msgID, sessionID: message.sessionID.bytes,
                               kind: Int(content.kind), sentAt: Int64(clamping: content.sentAt), receivedAt: Int64(clamping: now), body: content.body,
                               status: .received)
            guard try tx.dmMessages.insert(row) else { return nil }
            return .dm(try dmView(row, state: state, tx))
        case .receipt:
            for start in stride(from: 0, to: content.body.count, by: 16) {
                let id = Array(content.body[start..<min(start + 16, content.body.count)])
                if var mine = try tx.dmMessages.get(contact: message.contact.bytes, direction: .outgoing, msgID: id), mine.status != .delivered {
                    mine.status = .delivered
                    try tx.dmMessages.update(mine)
                }
            }
            return nil
        case .card:
            guard let contact = state.contacts[message.contact] else { return nil }
            return .contact(try contactView(contact, state: state, tx))
        case .ack:
            return nil
        case .none:
            if Int(content.kind) == FeedService.feedKeysKind, let handler = feedKeys.current {
                // A bad body is refused and changes nothing; the DM itself stays received.
                do { try handler.received(message.contact.bytes, content.body, tx) } catch {
                    logger.notice("a feed-keys body was refused", metadata: ["reason": "\(BurrowNode.describe(error))"])
                }
            }
            return nil
        }
    }

    /// Queues one receipt per contact for the texts among `updates` (a batch just processed);
    /// a failure is logged: the texts are stored, only their receipts wait for the next batch.
    func queueReceipts(for updates: ArraySlice<NodeUpdate>) {
        var received: [DMView] = []
        for case .dm(let message) in updates { received.append(message) }
        do { try sendReceipts(for: received) } catch {
            logger.warning("DM receipts not queued", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        feedKeys.current?.afterBatch()
    }

    /// Sends one receipt per contact for the texts received since the last (section 8).
    func sendReceipts(for received: [DMView]) throws {
        let byContact = Dictionary(grouping: received.filter { $0.direction == "in" }, by: \.identity)
        guard !byContact.isEmpty else { return }
        try store.transaction { tx in
            guard var state = try loadPigeon(tx) else { return }
            let now = Self.nowMilliseconds()
            for (identityHex, messages) in byContact.sorted(by: { $0.key < $1.key }) {
                guard let identity = try? Ed25519PublicKey(bytes: Hex.decode(identityHex)), let contact = state.contacts[identity],
                      state.currentSession(with: identity) != nil else { continue }
                for chunk in stride(from: 0, to: messages.count, by: MessageContent.maximumReceiptIDs) {
                    let ids = messages[chunk..<min(chunk + MessageContent.maximumReceiptIDs, messages.count)]
                        .compactMap { try? Hex.decode($0.id) }.flatMap { $0 }
                    let receipt = try MessageContent(kind: MessageContent.Kind.receipt.rawValue, msgID: Self.randomMessageID(), sentAt: now, body: ids)
                    let sent = try state.send(to: identity, content: receipt, now: now)
                    try save(sent, tx)
                    try queueFrames(sent.output.frames, to: contact, msgID: nil, tx)
                    state = sent.state
                }
            }
        }
    }

    /// Queued messages whose contact now has a session are encrypted; handshakes for the rest
    /// are (re)started; lifetimes are applied. Run by `sync` and `run`'s upkeep.
    func advanceDMs(timeout: Duration) async {
        do {
            try store.transaction { tx in
                guard var state = try loadPigeon(tx) else { return }
                let now = Self.nowMilliseconds()
                let expired = state.expire(now: now)
                try save(expired, tx)
                state = expired.state
                for contact in state.contacts.values.sorted(by: { $0.identityKey < $1.identityKey }) {
                    guard !(try tx.dmMessages.queued(contact: contact.identityKey.bytes)).isEmpty else { continue }
                    if state.currentSession(with: contact.identityKey) != nil {
                        state = try encryptQueued(for: contact.identityKey, state: state, now: now, tx)
                    } else if let last = try tx.dmOutbox.newestCreatedAt(contact: contact.identityKey.bytes),
                              Self.now() - last < Self.handshakeResendInterval {
                        continue  // handshake1 went out recently: give the contact time to answer
                    } else {
                        try startHandshake(with: contact, state: state, now: now, tx)
                        state = try loadPigeon(tx) ?? state
                    }
                }
                try tx.dmOutbox.prune(sentBefore: Self.now() - 7 * 86_400)
            }
        } catch {
            logger.warning("DM upkeep failed", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        await flushDMOutbox(timeout: timeout)
    }

    // MARK: - Reading

    /// `dm read`: stored texts, oldest first by sent_at (the newest `limit`).
    public func readDMs(contact text: String?, limit: Int?) throws -> [DMView] {
        try store.transaction { tx in
            guard let state = try loadPigeon(tx) else {
                if let text { throw NodeError.unknownContact("no contact matches \(text)") }
                return []
            }
            let identity = try text.map { try resolveContact($0, in: state, tx).identityKey.bytes }
            return try tx.dmMessages.list(contact: identity, kinds: [Int(MessageContent.Kind.text.rawValue)], limit: limit)
                .map { try dmView($0, state: state, tx) }
        }
    }

    func dmView(_ m: StoredDM, state: PigeonState, _ tx: StoreTransaction) throws -> DMView {
        let key = try? Ed25519PublicKey(bytes: m.contact)
        let contact = key.flatMap { state.contacts[$0] }
        let name = try tx.dmContacts.name(identity: m.contact) ?? "contact-" + String(Hex.encode(m.contact).prefix(8))
        return DMView(id: Hex.encode(m.msgID), contact: name, identity: Hex.encode(m.contact), direction: m.direction.rawValue,
                      text: String(decoding: m.body, as: UTF8.self), sentAt: UInt64(max(0, m.sentAt)),
                      receivedAt: m.receivedAt.map { UInt64(max(0, $0)) }, status: m.status.rawValue,
                      sessionID: m.sessionID.map(Hex.encode), verified: contact?.isVerified ?? false)
    }
}

/// A frame the engine refused, with the spec's code (section 9).
struct DMRefusal: Error, CustomStringConvertible {
    let code: PigeonError
    var description: String { code.rawValue }
}
