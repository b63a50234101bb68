import Foundation
import Marmot
import Mesh
import Nostr
import Pigeon
import Store

/// The one inbound pipeline: every unit that reaches the node — a relay's gift wrap or group
/// event, an event or a DM frame the mesh carried — enters here and is handed to the service
/// that owns it.
extension BurrowNode {

    /// A mesh delivery for `run` (a mailbox job): events go through the pipeline as if from a
    /// relay, and a group event of ours is passed on to the group's relays (8.4); queued DM
    /// frames are stepped. Beacons and invite messages belong to nearby-invite sessions.
    /// `resubscribe`: the set of groups changed, as `handleLive` says.
    public func handleMeshDelivery(_ delivery: MeshDelivery, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        var report = SyncReport()
        var resubscribe = false
        switch delivery.content {
        case .nostrEvent(let event):
            (report, resubscribe) = await handleMeshEvent(event, timeout: timeout)
        case .dm:
            // `run` queued the frame as it arrived (`enqueueMeshDM`); it may be stepped already.
            await drainMeshDMs(report: &report)
            directMessages.liveSender.kick(directMessages, deletions: [], timeout: timeout)
        case .beacon, .join:
            break
        }
        return (report, resubscribe)
    }

    /// An event the mesh carried: through the pipeline as if from a relay, then on to the
    /// group's relays (8.4) — only when the pipeline applied it for one of our groups. Anyone in
    /// radio range can sign a 445 with our group's `h` tag; what we could not decrypt, or had
    /// already processed, is not ours to republish.
    func handleMeshEvent(_ event: Event, timeout: Duration) async -> (report: SyncReport, resubscribe: Bool) {
        let (report, resubscribe) = await handleLive(event, timeout: timeout)
        if event.kind == MarmotKind.groupEvent, report.applied.contains(event.id) { meshBridge.bridgeToRelays(event, urls: groups.relayURLs(forEventOf: event)) }
        return (report, resubscribe)
    }

    /// Unwraps, validates and stores a welcome as a pending invite (the group waits, `pending`,
    /// until accepted). Anything invalid is recorded with its reason and never listed.
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
            if unwrapped.rumor.kind == DirectMessageService.dmRumorKind {
                try directMessages.handleDMFrame(unwrapped, wrapID: event.id, report: &report)
                return
            }
            if unwrapped.rumor.kind == JoinRequestRumor.kind {
                try groups.admitJoinRequest(unwrapped, wrapID: event.id, report: &report)
                return
            }
            let outcome = try groups.admitWelcome(unwrapped, wrapID: event.id)
            if let invite = outcome {
                report.processed += 1
                report.updates.append(.invite(invite))
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

    /// One gift wrap to us, processed as `sync` and `run` do (no replies are sent).
    @_spi(StoreAccess) public func processGiftWrapForBench(_ event: Event) -> SyncReport {
        var report = SyncReport()
        handleGiftWrap(event, report: &report)
        return report
    }

    /// Steps every queued mesh DM frame through the engine (a mailbox job: `run`'s, or `dm
    /// send` waiting for a handshake answer). Replies go straight back to the frame's sender;
    /// frames for known contacts (queued messages, acks) leave through the DM outbox.
    func drainMeshDMs(report: inout SyncReport) async {
        let frames = meshBridge.takeDMFrames()
        guard !frames.isEmpty else { return }
        let before = report.updates.count
        for item in frames {
            do {
                let replies = try directMessages.deliverDMFrame(item.frame, from: .mesh(item.sender), processedMark: nil, report: &report)
                for reply in replies {
                    try? await meshBridge.mesh?.send(type: .dm, recipient: item.sender, payload: reply)
                }
            } catch {
                report.fail("", "mesh DM frame: \(BurrowNode.describe(error))")
            }
        }
        directMessages.queueReceipts(for: report.updates[before...])
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
                await drainMeshDMs(report: &report)
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
