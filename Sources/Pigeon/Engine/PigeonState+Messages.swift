/// Sections 4.6, 5.3 and 5.4 at the engine level: delivering frames, sending content, and
/// the upkeep of lifetimes.
extension PigeonState {
    // MARK: Deliver

    /// Processes one incoming frame (from any transport). Throws the refusal and changes
    /// nothing, or returns the new state with the replies to send and what was received.
    ///
    /// `origin` picks the budgets a new pending state or held frame counts against (a node
    /// passes `.stranger` for anything not sealed by a contact's `N`).
    public func deliver<K: PigeonKeySource>(
        frame bytes: [UInt8], now: UInt64, keys: inout K, origin: FrameOrigin = .contact
    ) throws(PigeonError) -> PigeonTransition<DeliverOutput> {
        try transition(keys: &keys) { (state: inout PigeonState, keys: inout K) throws(PigeonError) -> DeliverOutput in
            let frame = try Frame(bytes: bytes)
            var out = DeliverOutput()
            switch frame.type {
            case .handshake1: try state.receiveHandshake1(frame, origin: origin, now: now, keys: &keys, into: &out)
            case .handshake2: try state.receiveHandshake2(frame, now: now, keys: &keys, into: &out)
            case .handshake3: try state.receiveHandshake3(frame, now: now, keys: &keys, into: &out)
            case .message:
                if state.sessions[frame.sessionID] != nil {
                    out.message = try state.receiveMessage(frame, now: now, keys: &keys)
                } else {
                    try state.hold(frame, now: now)
                    out.held = true
                }
            }
            return out
        }
    }

    /// Section 4.6: a message for a pending responder state is held (32 per session, 256 in all);
    /// for a stranger's pending state, within the strangers' smaller budget, counted apart.
    mutating func hold(_ frame: Frame, now: UInt64) throws(PigeonError) {
        expirePending(now: now)
        guard case .responder(let owner)? = pending[frame.sessionID] else { throw .sessionUnknown }
        var list = held[frame.sessionID] ?? []
        // A copy already held is not held twice.
        if list.contains(where: { constantTimeEqual($0.frame, frame.bytes) }) { return }
        // Over the caps the frame is not kept: the sender's session will resend nothing, but
        // it cannot have sent more than this before the handshake3 arrived in any honest run.
        let stranger = owner.origin.isStranger
        let perSession = stranger ? StrangerLimits.maxHeldPerSession : PigeonLimits.maxHeldPerSession
        let total = stranger ? StrangerLimits.maxHeldTotal : PigeonLimits.maxHeldTotal
        guard list.count < perSession, heldFrameCount(strangers: stranger) < total else { throw .sessionUnknown }
        list.append(HeldFrame(frame: frame.bytes, receivedAt: now))
        held[frame.sessionID] = list
    }

    /// Decrypts a message frame in its session (5.4), confirms an initiator's session, checks
    /// the content (3.1) and applies a card (kind 3).
    mutating func receiveMessage<K: PigeonKeySource>(_ frame: Frame, now: UInt64, keys: inout K) throws(PigeonError) -> ReceivedMessage {
        guard frame.type == .message, var session = sessions[frame.sessionID] else { throw .sessionUnknown }
        let padded = try session.ratchet.decrypt(frame: frame, binding: session.binding, now: now, keys: &keys)
        session.confirmed = true
        sessions[session.id] = session

        // From here on the message is authentic and its key is consumed: refusals are reported,
        // not thrown.
        let content: MessageContent
        do {
            content = try MessageContent.decode(Padding.unpad(padded))
        } catch {
            return ReceivedMessage(sessionID: session.id, contact: session.contact, content: nil, refusal: .badPlaintext)
        }
        var refusal: PigeonError?
        if content.knownKind == .card {
            do throws(PigeonError) {
                let card = try ContactCard(bytes: content.body)
                guard var contact = contacts[session.contact] else { throw .unknownContact }
                try contact.apply(card)
                contacts[session.contact] = contact
            } catch {
                refusal = error
            }
        }
        return ReceivedMessage(sessionID: session.id, contact: session.contact, content: content, refusal: refusal)
    }

    // MARK: Send (5.3)

    /// Encrypts `content` on the contact's current session. Returns the frames to send (the
    /// stored handshake3 first while the session is unconfirmed); the store commits the new
    /// state with the outbox row before any transport sees them. Kind 3 (a card) must be a
    /// valid card of the own `I`, newer than the own card, and replaces it.
    public func send(
        to contact: Ed25519PublicKey, content: MessageContent, now: UInt64
    ) throws(PigeonError) -> PigeonTransition<SendOutput> {
        try transition { (state: inout PigeonState) throws(PigeonError) -> SendOutput in
            guard state.contacts[contact] != nil else { throw .unknownContact }
            guard var session = state.currentSession(with: contact) else { throw .sessionUnknown }
            if content.knownKind == .card {
                let card = try ContactCard(bytes: content.body)
                guard card.identityKey == state.local.identityKey.publicKey,
                      card.staticKey == state.local.staticKey.publicKey
                else { throw .identityMismatch }
                guard card.createdAt >= state.local.card.createdAt else { throw .cardOutdated }
                state.local.card = card
            }
            let encoded = content.bytes
            let padded = try Padding.pad(encoded)
            let frame = try session.ratchet.encrypt(padded: padded, session: session.id, binding: session.binding)
            state.sessions[session.id] = session
            let frames = session.role == .initiator && !session.confirmed ? [session.handshake3, frame] : [frame]
            return SendOutput(sessionID: session.id, frames: frames, content: encoded, paddedLength: padded.count)
        }
    }

    /// Steps the current session's sending chain `count` times without sending: the vectors'
    /// `advance` (messages lost in transit). Not used by a node.
    public func advanceSendingChain(with contact: Ed25519PublicKey, count: Int) throws(PigeonError) -> PigeonTransition<Void> {
        try transition { (state: inout PigeonState) throws(PigeonError) in
            guard var session = state.currentSession(with: contact) else { throw .sessionUnknown }
            try session.ratchet.skipSending(count)
            state.sessions[session.id] = session
        }
    }

    // MARK: Contacts

    /// Adds a verified card as a contact (state `added`), or applies it to the stored contact
    /// (`card_outdated` if older). The own card is `identity_mismatch`.
    public func addContact(_ card: ContactCard) throws(PigeonError) -> PigeonTransition<Contact> {
        try transition { (state: inout PigeonState) throws(PigeonError) -> Contact in
            guard card.identityKey != state.local.identityKey.publicKey else { throw .identityMismatch }
            var contact = state.contacts[card.identityKey] ?? Contact(card: card, state: .added)
            try contact.apply(card)
            contact.state = .added
            state.contacts[card.identityKey] = contact
            return contact
        }
    }

    /// Marks the contact verified at `now` (or clears the mark).
    public func setVerified(_ contact: Ed25519PublicKey, _ verified: Bool, now: UInt64) throws(PigeonError) -> PigeonTransition<Contact> {
        try transition { (state: inout PigeonState) throws(PigeonError) -> Contact in
            guard var record = state.contacts[contact] else { throw .unknownContact }
            record.verifiedAt = verified ? now : nil
            state.contacts[contact] = record
            return record
        }
    }

    /// Deletes the contact with its sessions, pending handshakes and held frames.
    public func removeContact(_ contact: Ed25519PublicKey) throws(PigeonError) -> PigeonTransition<Void> {
        try transition { (state: inout PigeonState) throws(PigeonError) in
            guard state.contacts[contact] != nil else { throw .unknownContact }
            state.contacts[contact] = nil
            for (id, session) in state.sessions where session.contact == contact { state.sessions[id] = nil }
            for (id, p) in state.pending {
                if case .initiator(let i) = p, i.contact == contact {
                    state.pending[id] = nil
                    state.held[id] = nil
                }
            }
        }
    }

    /// Replaces the own card (reissued by the node for new relays, nickname or static key);
    /// the caller sends it to contacts as content kind 3.
    public func replaceOwnCard(_ card: ContactCard) throws(PigeonError) -> PigeonTransition<Void> {
        try transition { (state: inout PigeonState) throws(PigeonError) in
            guard card.identityKey == state.local.identityKey.publicKey, card.staticKey == state.local.staticKey.publicKey else {
                throw .identityMismatch
            }
            guard card.createdAt >= state.local.card.createdAt else { throw .cardOutdated }
            state.local.card = card
        }
    }

    /// Section 4.6: whether a frame for an unknown session, in a gift wrap sealed by this
    /// contact's `N`, should start a recovery handshake now (at most once per 24 h per
    /// contact). If so the returned transition records the time; the caller then calls `start`.
    public func recoveryHandshakeDue(for contact: Ed25519PublicKey, now: UInt64) -> PigeonTransition<Bool>? {
        guard var record = contacts[contact] else { return nil }
        if let last = record.lastRecoveryHandshakeAt, now < last &+ PigeonLimits.handshakeWindowMs {
            return PigeonTransition(state: self, output: false, changes: [])
        }
        record.lastRecoveryHandshakeAt = now
        var state = self
        state.contacts[contact] = record
        return transition(to: state, output: true)
    }

    // MARK: Upkeep

    /// Applies every lifetime at `now`: pending states and held frames after 24 h, the seen
    /// cache, previous sessions 7 days after they stopped being current, skipped keys after
    /// 30 days. The node runs it on its upkeep timer.
    public func expire(now: UInt64) -> PigeonTransition<Void> {
        var state = self
        state.expirePending(now: now)
        state.seen.expire(now: now)
        for (id, session) in state.sessions {
            if case .previous(let since) = session.standing, now > since, now - since > PigeonLimits.previousSessionLifetimeMs {
                state.sessions[id] = nil
                continue
            }
            var updated = session
            updated.ratchet.expireSkippedKeys(now: now)
            if updated != session { state.sessions[id] = updated }
        }
        return transition(to: state, output: ())
    }

    // MARK: Inspection (the vectors' `state` step)

    /// The current session's ratchet with `contact`.
    public func ratchetSnapshot(with contact: Ed25519PublicKey) -> (SessionID, RatchetSnapshot)? {
        guard let session = currentSession(with: contact) else { return nil }
        return (session.id, session.ratchet.snapshot)
    }
}
