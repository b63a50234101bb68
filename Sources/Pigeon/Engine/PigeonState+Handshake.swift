/// Sections 4.2–4.5: starting handshakes and processing handshake frames.
extension PigeonState {
    // MARK: Start (4.2 step 1)

    /// Starts a handshake with `contact`: makes `e_i`, stores the pending state and returns the
    /// handshake1 (the node resends those bytes with backoff until answered or expired). If an
    /// unexpired pending handshake with the contact exists, its handshake1 is returned again.
    public func start<K: PigeonKeySource>(
        with contact: Ed25519PublicKey, now: UInt64, keys: inout K
    ) throws(PigeonError) -> PigeonTransition<StartOutput> {
        try transition(keys: &keys) { (state: inout PigeonState, keys: inout K) throws(PigeonError) -> StartOutput in
            guard state.contacts[contact] != nil else { throw .unknownContact }
            state.expirePending(now: now)
            if let (id, existing) = state.initiatorPending(for: contact) {
                return StartOutput(sessionID: id, frame: existing.handshake1, resent: true)
            }
            let ephemeral = keys.nextEphemeralKey()
            let id = SessionID(initiatorEphemeral: ephemeral.publicKey)
            guard state.pending[id] == nil, state.sessions[id] == nil else { throw .handshakeReplay }
            let (_, message) = try Self.initiatorNoise(state.local, ephemeral: ephemeral, timestamp: now)
            let frame = Frame.header(.handshake1, id) + message
            state.pending[id] = .initiator(InitiatorPending(contact: contact, ephemeral: ephemeral, timestamp: now, handshake1: frame))
            return StartOutput(sessionID: id, frame: frame, resent: false)
        }
    }

    func initiatorPending(for contact: Ed25519PublicKey) -> (SessionID, InitiatorPending)? {
        for (id, p) in pending.sorted(by: { $0.key < $1.key }) {
            if case .initiator(let i) = p, i.contact == contact { return (id, i) }
        }
        return nil
    }

    /// Noise message 1 with payload `ts` (u64): deterministic in (S, e, ts), so the pending
    /// state keeps only `e` and recomputes this on handshake2.
    static func initiatorNoise(_ local: LocalIdentity, ephemeral: X25519PrivateKey, timestamp: UInt64) throws(PigeonError) -> (NoiseXXInitiatorSentE, [UInt8]) {
        do {
            return try NoiseXX.initiate(prologue: prologue, staticKey: local.staticKey, ephemeral: ephemeral, payload: .bigEndian(timestamp))
        } catch { throw .handshakeFailed }
    }

    // MARK: Handshake1 (4.3 step 1, 4.5)

    mutating func receiveHandshake1<K: PigeonKeySource>(
        _ frame: Frame, origin: FrameOrigin, now: UInt64, keys: inout K, into out: inout DeliverOutput
    ) throws(PigeonError) {
        guard let ts = frame.handshake1Timestamp else { throw .badFrame }
        // 4.5 step 1: the window and the floor (the strangers' own floor for a stranger).
        if ts < now.saturatingSubtract(PigeonLimits.handshakeWindowMs) || ts <= seen.staleFloor(for: origin) { throw .handshakeStale }
        if ts > now &+ PigeonLimits.clockSkewMs { throw .handshakeFuture }
        // 4.5 step 2: the seen-ephemeral cache.
        let e = X25519PublicKey(validBytes: Array(frame.body[0..<32]))
        seen.expire(now: now)
        expirePending(now: now)
        if seen.contains(e) {
            if case .responder(let p)? = pending[frame.sessionID], constantTimeEqual(p.handshake1, frame.bytes) {
                out.outputs = [p.handshake2]
                out.duplicate = true
                return
            }
            throw .handshakeReplay
        }
        // Our own handshake1 reflected back, or a session that exists: nothing to answer.
        guard pending[frame.sessionID] == nil, sessions[frame.sessionID] == nil else { throw .handshakeReplay }

        let read: NoiseXXResponderReadE
        do { read = try NoiseXX.respond(prologue: Self.prologue, staticKey: local.staticKey, message: frame.body) } catch { throw .handshakeFailed }
        let ephemeral = keys.nextEphemeralKey()
        let ratchetKey = keys.nextRatchetKey()
        let sent: NoiseXXResponderSentResponse, message: [UInt8]
        do {
            (sent, message) = try read.writeMessage2(ephemeral: ephemeral, payload: ratchetKey.publicKey.bytes + local.card.bytes)
        } catch { throw .handshakeFailed }
        let handshake2 = Frame.header(.handshake2, frame.sessionID) + message

        // At most 64 responder pending states of contacts, and the strangers' own budgets: the
        // oldest of the same budget goes (with its held frames), never one of another budget.
        makeRoomForResponder(origin: origin)
        pending[frame.sessionID] = .responder(ResponderPending(
            noise: sent, ratchetKey: ratchetKey, timestamp: ts, handshake1: frame.bytes, handshake2: handshake2, origin: origin))
        seen.insert(e, timestamp: ts, origin: origin, now: now)
        out.outputs = [handshake2]
    }

    // MARK: Handshake2 (4.2 steps 2–3)

    mutating func receiveHandshake2<K: PigeonKeySource>(_ frame: Frame, now: UInt64, keys: inout K, into out: inout DeliverOutput) throws(PigeonError) {
        guard case .initiator(let p)? = pending[frame.sessionID], !Self.isExpired(p.timestamp, now: now) else {
            if let session = sessions[frame.sessionID], session.role == .initiator {
                out.outputs = [session.handshake3]
                out.duplicate = true
                return
            }
            throw .sessionUnknown
        }
        let (sentE, _) = try Self.initiatorNoise(local, ephemeral: p.ephemeral, timestamp: p.timestamp)
        let response: NoiseXXInitiatorReadResponse
        do { response = try sentE.readMessage2(frame.body) } catch { throw .handshakeFailed }
        guard response.payload.count >= 32 + ContactCard.minimumLength else { throw .badCard }
        let remoteRatchet = X25519PublicKey(validBytes: Array(response.payload[0..<32]))
        let card = try ContactCard(bytes: Array(response.payload[32...]))
        guard response.remoteStatic == card.staticKey else { throw .identityMismatch }
        guard card.identityKey == p.contact else { throw .identityMismatch }
        var contact = contacts[p.contact] ?? Contact(card: card, state: .added)
        try contact.apply(card)

        let ratchetKey = keys.nextRatchetKey()
        let result: NoiseHandshakeResult, message: [UInt8]
        do { (result, message) = try response.writeMessage3(payload: ratchetKey.publicKey.bytes + local.card.bytes) } catch { throw .handshakeFailed }
        let handshake3 = Frame.header(.handshake3, frame.sessionID) + message
        let sessionKeys = Self.sessionKeys(result, initiator: local.identityKey.publicKey, responder: card.identityKey)
        let ratchet = try DoubleRatchet.initiator(root: sessionKeys.ratchetRoot.bytes, ratchetKey: ratchetKey, remoteRatchetKey: remoteRatchet)

        contacts[p.contact] = contact
        pending[frame.sessionID] = nil
        let session = Session(
            id: frame.sessionID, contact: p.contact, role: .initiator, handshakeTimestamp: p.timestamp,
            binding: sessionKeys.binding, establishedAt: now, handshake3: handshake3, confirmed: false,
            standing: .current, ratchet: ratchet)
        let isCurrent = install(session, now: now)
        out.outputs = [handshake3]
        out.established = EstablishedSession(id: session.id, contact: p.contact, role: .initiator, keys: sessionKeys, isCurrent: isCurrent)
    }

    // MARK: Handshake3 (4.3 steps 2–3)

    mutating func receiveHandshake3<K: PigeonKeySource>(_ frame: Frame, now: UInt64, keys: inout K, into out: inout DeliverOutput) throws(PigeonError) {
        guard case .responder(let p)? = pending[frame.sessionID], !Self.isExpired(p.timestamp, now: now) else {
            if let session = sessions[frame.sessionID], session.role == .responder,
               constantTimeEqual(session.handshake3, frame.bytes) {
                out.duplicate = true
                return
            }
            throw .sessionUnknown
        }
        let result: NoiseHandshakeResult, payload: [UInt8]
        do { (result, payload) = try p.noise.readMessage3(frame.body) } catch { throw .handshakeFailed }
        guard payload.count >= 32 + ContactCard.minimumLength else { throw .badCard }
        let remoteRatchet = X25519PublicKey(validBytes: Array(payload[0..<32]))
        let card = try ContactCard(bytes: Array(payload[32...]))
        guard result.remoteStatic == card.staticKey, card.identityKey != local.identityKey.publicKey else { throw .identityMismatch }
        let contactKey = card.identityKey
        var contact: Contact
        if let known = contacts[contactKey] {
            contact = known
            try contact.apply(card)
        } else {
            contact = Contact(card: card, state: .request)
            out.contactRequest = true
        }

        let sessionKeys = Self.sessionKeys(result, initiator: contactKey, responder: local.identityKey.publicKey)
        let ratchet = try DoubleRatchet.responder(
            root: sessionKeys.ratchetRoot.bytes, ratchetKey: p.ratchetKey, remoteRatchetKey: remoteRatchet, nextKey: keys.nextRatchetKey())

        contacts[contactKey] = contact
        pending[frame.sessionID] = nil
        let session = Session(
            id: frame.sessionID, contact: contactKey, role: .responder, handshakeTimestamp: p.timestamp,
            binding: sessionKeys.binding, establishedAt: now, handshake3: frame.bytes, confirmed: true,
            standing: .current, ratchet: ratchet)
        let isCurrent = install(session, now: now)
        out.established = EstablishedSession(id: session.id, contact: contactKey, role: .responder, keys: sessionKeys, isCurrent: isCurrent)
        out.ackDue = true

        // Held frames for this session, in arrival order; each succeeds or fails on its own.
        let waiting = held[frame.sessionID] ?? []
        held[frame.sessionID] = nil
        for heldFrame in waiting {
            var attempt = self
            var attemptKeys = keys
            let result = Result<ReceivedMessage, PigeonError> { () throws(PigeonError) -> ReceivedMessage in
                try attempt.receiveMessage(Frame(bytes: heldFrame.frame), now: now, keys: &attemptKeys)
            }
            if case .success = result {
                self = attempt
                keys = attemptKeys
            }
            out.released.append(ReleasedFrame(frame: heldFrame.frame, result: result))
        }
    }

    /// Evicts the oldest responder states of `origin`'s budget until one more fits: the
    /// contacts' 64 (section 4.5), or the strangers' total and per-sender caps.
    mutating func makeRoomForResponder(origin: FrameOrigin) {
        func evictOldest(_ states: [(key: SessionID, value: ResponderPending)], keeping limit: Int) {
            guard states.count >= limit else { return }
            for (id, _) in states.sorted(by: { ($0.value.timestamp, $0.key) < ($1.value.timestamp, $1.key) }).prefix(states.count - limit + 1) {
                pending[id] = nil
                held[id] = nil
            }
        }
        let responders = pending.compactMap { entry -> (key: SessionID, value: ResponderPending)? in
            if case .responder(let p) = entry.value { return (entry.key, p) } else { return nil }
        }
        switch origin {
        case .contact:
            evictOldest(responders.filter { !$0.value.origin.isStranger }, keeping: PigeonLimits.maxResponderPending)
        case .stranger:
            evictOldest(responders.filter { $0.value.origin == origin }, keeping: StrangerLimits.maxPendingPerSender)
            // What the per-sender cap left of the strangers' states.
            evictOldest(responders.filter { $0.value.origin.isStranger && pending[$0.key] != nil }, keeping: StrangerLimits.maxPending)
        }
    }

    // MARK: Shared

    static func isExpired(_ timestamp: UInt64, now: UInt64) -> Bool {
        timestamp &+ PigeonLimits.handshakeWindowMs < now
    }

    /// Section 4.4: root from ck (salted with h), binding = I_initiator ‖ I_responder ‖ h.
    static func sessionKeys(_ result: NoiseHandshakeResult, initiator: Ed25519PublicKey, responder: Ed25519PublicKey) -> SessionKeys {
        let h = result.handshakeHash, ck = result.chainingKey
        return SessionKeys(
            handshakeHash: h, chainingKey: SecretBytes(ck),
            ratchetRoot: SecretBytes(RatchetKDF.ratchetRoot(handshakeHash: h, chainingKey: ck)),
            binding: initiator.bytes + responder.bytes + h)
    }

    /// Section 4.6: a new session becomes current if its handshake1 ts is newer than the
    /// current one's (equal: the smaller session id), else it is kept as previous. At most three
    /// previous sessions per contact (the oldest goes). Returns whether it became current.
    mutating func install(_ newSession: Session, now: UInt64) -> Bool {
        var session = newSession
        let current = currentSession(with: session.contact)
        let becomesCurrent: Bool
        if let current {
            becomesCurrent = session.handshakeTimestamp > current.handshakeTimestamp
                || (session.handshakeTimestamp == current.handshakeTimestamp && session.id < current.id)
        } else {
            becomesCurrent = true
        }
        if becomesCurrent, let current {
            sessions[current.id]?.standing = .previous(since: now)
        }
        session.standing = becomesCurrent ? .current : .previous(since: now)
        sessions[session.id] = session
        let previous = sessions(with: session.contact).filter { !$0.isCurrent }
        for old in previous.dropFirst(PigeonLimits.maxPreviousSessions) { sessions[old.id] = nil }
        return becomesCurrent
    }

    /// Drops pending states older than 24 h, with their held frames.
    mutating func expirePending(now: UInt64) {
        for (id, p) in pending where Self.isExpired(p.timestamp, now: now) {
            pending[id] = nil
            held[id] = nil
        }
    }
}

extension UInt64 {
    func saturatingSubtract(_ other: UInt64) -> UInt64 { self > other ? self - other : 0 }
}
