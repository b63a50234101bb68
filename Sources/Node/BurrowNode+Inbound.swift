import Foundation
import Marmot
import Mesh
import Nostr
import Pigeon
import Store

/// The one inbound pipeline (ARCHITECTURE "The event pipeline"): every unit that reaches the
/// node — a relay's gift wrap, group event or profile, an event or a DM frame the mesh carried —
/// enters through `receive`, is routed by `InboundPipeline`, and is decided by the service that
/// owns it in store transactions only. What follows (publishing, flushing, commits owed,
/// bridging) comes back as `InboundEffect`s that `carryOut` performs after the job.
extension BurrowNode {
    /// Runs one unit through the pipeline: no network I/O (the live loop runs it as a mailbox
    /// job and carries the effects out after it).
    func receive(_ unit: InboundUnit, as writer: borrowing NodeWriter) -> InboundOutcome {
        var outcome = InboundOutcome()
        switch unit {
        case .relayEvents(let events):
            var wraps: [Event] = []
            var groupEvents: [Event] = []
            for event in events {
                switch InboundPipeline.route(event) {
                case .giftWrap: wraps.append(event)
                case .groupEvent: groupEvents.append(event)
                case .profile:
                    // Only the people we show (the filter asks for no one else; a relay may send more).
                    if profiles.liveProfileAuthors.contains(event.pubkey) {
                        _ = try? store.transaction { try profiles.keepProfile(event, tx: $0) }
                    }
                case .ignored: break
                }
            }
            if !wraps.isEmpty { receiveGiftWraps(wraps, into: &outcome) }
            if !groupEvents.isEmpty { receiveGroupEvents(groupEvents, into: &outcome) }
            let recent = Self.now() - InboundPipeline.meshBridgeWindow
            for event in groupEvents where event.createdAt >= recent { outcome.effects.append(.bridge(event, to: .mesh)) }
        case .meshEvent(let event):
            switch InboundPipeline.route(event) {
            case .giftWrap: receiveGiftWraps([event], into: &outcome)
            case .groupEvent:
                receiveGroupEvents([event], into: &outcome)
                // Anyone in radio range can sign a 445 with our group's `h` tag: only what the
                // pipeline applied for one of our groups is ours to pass on to its relays.
                if outcome.report.applied.contains(event.id) { outcome.effects.append(.bridge(event, to: .relays)) }
            case .profile, .ignored: break
            }
        case .meshDMFrames:
            receiveMeshDMs(into: &outcome)
        }
        return outcome
    }

    /// Gift wraps: each unwrapped and handed to its service; one receipt queued per contact;
    /// the DM outbox flushed and the processed wraps deleted from our mailbox afterwards.
    private func receiveGiftWraps(_ events: [Event], into outcome: inout InboundOutcome) {
        let before = outcome.report.updates.count
        for event in events { handleGiftWrap(event, report: &outcome.report) }
        directMessages.queueReceipts(for: outcome.report.updates[before...])
        outcome.effects.append(.flushDMs(deleteWraps: outcome.report.settledWraps))
        outcome.report.settledWraps = []
    }

    /// Group events, with the live events held before them (placed as epochs arrive).
    private func receiveGroupEvents(_ events: [Event], into outcome: inout InboundOutcome) {
        let (changed, held) = groups.processGroupEvents(groups.liveHeld + events, report: &outcome.report, keepHeld: true)
        groups.liveHeld = Array(held.suffix(GroupService.maxLiveHeld))
        if !changed.isEmpty { outcome.effects.append(.resubscribe) }
        if !outcome.report.effects.isEmpty || (try? store.transaction({ try !$0.commitIntents.lost().isEmpty })) == true {
            outcome.effects.append(.commitsOwed)
        }
        outcome.effects.append(.flushOutbox)
        let joined = outcome.report.updates.contains { if case .group(let view) = $0 { return !view.joined.isEmpty } else { return false } }
        if joined { outcome.effects.append(.nameNewMembers) }
    }

    /// Unwraps a gift wrap and hands its rumor to the service that owns it (a DM frame, a join
    /// request, a welcome). Anything invalid is recorded with its reason and never listed.
    func handleGiftWrap(_ event: Event, report: inout SyncReport) {
        // Whatever becomes of it, a wrap marked processed leaves our mailbox.
        var alreadyProcessed = false
        defer {
            if alreadyProcessed || (try? store.transaction({ try $0.processedEvents.contains(eventID: event.id.bytes) })) == true {
                report.settledWraps.append(event.id)
            }
        }
        do {
            alreadyProcessed = try store.transaction { try $0.processedEvents.contains(eventID: event.id.bytes) }
            if alreadyProcessed { return }
            let unwrapped = try GiftWrap.unwrap(event, recipient: keys)
            switch InboundPipeline.route(rumorKind: unwrapped.rumor.kind) {
            case .dmFrame:
                try directMessages.handleDMFrame(unwrapped, wrapID: event.id, report: &report)
            case .joinRequest:
                try groups.admitJoinRequest(unwrapped, wrapID: event.id, report: &report)
            case .welcome:
                if let invite = try groups.admitWelcome(unwrapped, wrapID: event.id) {
                    report.processed += 1
                    report.updates.append(.invite(invite))
                }
            case .ignored(let kind):
                _ = try store.transaction { try $0.processedEvents.mark(eventID: event.id.bytes, outcome: "ignored rumor kind \(kind)") }
            }
        } catch let refusal as DMRefusal where refusal.code == .messageReplayed {
            // A copy from another transport or relay: dropped silently (section 6).
            _ = try? store.transaction { try $0.processedEvents.mark(eventID: event.id.bytes, outcome: "DM frame already received") }
        } catch {
            let reason = Self.describe(error)
            _ = try? store.transaction { try $0.processedEvents.mark(eventID: event.id.bytes, outcome: "rejected: \(reason)") }
            report.processed += 1
            report.fail(event.id, reason)
        }
    }

    /// The queued mesh DM frames, stepped through the engine. Replies go straight back to each
    /// frame's sender (an effect); frames for known contacts leave through the DM outbox.
    private func receiveMeshDMs(into outcome: inout InboundOutcome) {
        let frames = meshBridge.takeDMFrames()
        guard !frames.isEmpty else { return }
        let before = outcome.report.updates.count
        for item in frames {
            do {
                let replies = try directMessages.deliverDMFrame(item.frame, from: .mesh(item.sender), processedMark: nil, report: &outcome.report)
                if !replies.isEmpty { outcome.effects.append(.meshReplies(to: item.sender, frames: replies)) }
            } catch {
                outcome.report.fail("", "mesh DM frame: \(BurrowNode.describe(error))")
            }
        }
        directMessages.queueReceipts(for: outcome.report.updates[before...])
        outcome.effects.append(.flushDMs(deleteWraps: []))
    }

    /// Carries out what an inbound job asked for, after it. With a mailbox (`run`), what
    /// changes the store again is a job of its own behind the others; without one (a command,
    /// a test) it runs at once. Sends that touch no state leave outside the mailbox.
    func carryOut(_ outcome: inout InboundOutcome, timeout: Duration, mailbox: NodeMailbox?) async {
        func job(_ body: @escaping @Sendable () async -> SyncReport) async -> SyncReport {
            guard let mailbox else { return await body() }
            return (try? await mailbox.write { _ in await body() }) ?? SyncReport()
        }
        let effects = outcome.effects
        outcome.effects = []
        for effect in effects {
            switch effect {
            case .commitsOwed:
                let owed = outcome.report.effects
                outcome.report.effects = []
                let made = await job {
                    var report = SyncReport()
                    report.effects = owed
                    await self.groups.carryOutEffects(timeout: timeout, report: &report)
                    return report
                }
                outcome.report.updates += made.updates
                outcome.report.errors += made.errors
            case .flushOutbox:
                _ = await job {
                    await self.gateway.flushOutbox(timeout: timeout)
                    return SyncReport()
                }
            case .flushDMs(let deletions):
                directMessages.liveSender.kick(directMessages, deletions: deletions, timeout: timeout)
            case .meshReplies(let recipient, let frames):
                for frame in frames { _ = try? await meshBridge.mesh?.send(type: .dm, recipient: recipient, payload: frame) }
            case .bridge(let event, .relays):
                meshBridge.bridgeToRelays(event, urls: groups.relayURLs(forEventOf: event))
            case .bridge(let event, .mesh):
                await meshBridge.carryOnMesh(event)
            case .nameNewMembers:
                await profiles.nameNewMembers(in: &outcome.report, timeout: timeout)
            case .resubscribe:
                outcome.effects.append(.resubscribe)
            }
        }
    }

    /// One event as `run` handles it — the unit, then its effects at once (tests, and the
    /// mesh events of a command). `resubscribe`: the filters changed.
    public func handleLive(_ event: Event, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        await handle(.relayEvents([event]), timeout: timeout)
    }

    /// An event the mesh carried, as `run` handles it.
    func handleMeshEvent(_ event: Event, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        await handle(.meshEvent(event), timeout: timeout)
    }

    private func handle(_ unit: InboundUnit, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        if unit.carriesGroupEvents { await groups.recoverPendingCommits(timeout: timeout) }
        var outcome = await exclusively { receive(unit, as: $0) }
        await carryOut(&outcome, timeout: timeout, mailbox: nil)
        return (outcome.report, outcome.resubscribe)
    }

    /// One gift wrap to us, processed as `sync` and `run` do (no replies are sent).
    @_spi(StoreAccess) public func processGiftWrapForBench(_ event: Event) -> SyncReport {
        var report = SyncReport()
        handleGiftWrap(event, report: &report)
        return report
    }

    /// `dm send`: on the current session at once; otherwise a handshake is started and the
    /// message waits (`queued`) until it completes — within `timeout` here, else on a later
    /// `sync` or under `run`.
    public func sendDM(to contactText: String, text: String, via: DMVia = .auto, timeout: Duration) async throws -> DMView {
        if via == .mesh, meshBridge.mesh == nil {
            // No contact name or key here: errors end up in logs and screenshots.
            throw NodeError.noRoute("the mesh is not running in this home (start `burrow run --mesh …`), so no mesh route reaches the contact")
        }
        let body = Array(text.utf8)
        guard !body.isEmpty else { throw NodeError.invalidInput("a message needs text") }
        guard body.count <= MessageContent.maximumTextBody else {
            throw NodeError.messageTooLarge("a message holds at most \(MessageContent.maximumTextBody) bytes of text")
        }
        let msgID = DirectMessageService.randomMessageID()
        let (identity, needsHandshake) = try store.transaction { tx -> (Ed25519PublicKey, Bool) in
            let state = try directMessages.pigeon(tx)
            let contact = try directMessages.resolveContact(contactText, in: state, tx)
            let now = DirectMessageService.nowMilliseconds()
            try tx.dmMessages.insert(StoredDM(contact: contact.identityKey.bytes, direction: .outgoing, msgID: msgID, sessionID: nil,
                                              kind: Int(MessageContent.Kind.text.rawValue), sentAt: Int64(clamping: now), receivedAt: nil,
                                              body: body, status: .queued))
            if state.currentSession(with: contact.identityKey) != nil {
                try directMessages.encryptQueued(for: contact.identityKey, state: state, now: now, tx)
                return (contact.identityKey, false)
            }
            try directMessages.startHandshake(with: contact, state: state, now: now, tx)
            return (contact.identityKey, true)
        }
        Failpoint.dmStored.check()
        // `via` is for this contact's frames; the rest of the outbox goes the default way.
        let route = DMRoute(contact: identity.bytes, via: via)
        await directMessages.flushDMOutbox(timeout: timeout, route: route)
        if needsHandshake {
            // Wait for the answer (handshake2) within the timeout; the queued message goes on
            // the new session as soon as it is established.
            let deadline = ContinuousClock.now.advanced(by: timeout)
            while ContinuousClock.now < deadline {
                var report = SyncReport()
                // The answer may come by the mesh: `run` queues its frames for us to step here.
                var answers = await exclusively { receive(.meshDMFrames, as: $0) }
                answers.effects.removeAll { if case .flushDMs = $0 { return true } else { return false } }
                await carryOut(&answers, timeout: timeout, mailbox: nil)
                report.updates += answers.report.updates
                if via != .mesh { try? await syncDMInbox(timeout: min(timeout, .seconds(5)), report: &report) }
                if try store.transaction({ tx in try directMessages.loadPigeon(tx)?.currentSession(with: identity) != nil }) { break }
                try? await Task.sleep(for: .milliseconds(300))
            }
            await directMessages.flushDMOutbox(timeout: timeout, route: route)
        }
        return try store.transaction { tx in
            guard let stored = try tx.dmMessages.get(contact: identity.bytes, direction: .outgoing, msgID: msgID),
                  let state = try directMessages.loadPigeon(tx) else { throw NodeError.internalError("the message was not stored") }
            return try directMessages.dmView(stored, state: state, tx)
        }
    }

    /// Fetches the gift wraps addressed to us and processes them (welcomes and DM frames).
    func syncDMInbox(timeout: Duration, report: inout SyncReport) async throws {
        try await syncGiftWraps(timeout: timeout, report: &report)
        await directMessages.flushDMOutbox(timeout: timeout)
    }
}
