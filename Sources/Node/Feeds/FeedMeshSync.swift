import Feed
import Foundation
import Logging
import Mesh

/// Feed sync on the mesh (feed.md 8) for `burrow run --mesh`: announces carry our presence
/// tag; a neighbour whose tag matches a contact with a pair key starts a session within 1 s,
/// then every 60 s while it is heard. Packets from a neighbour are batched for 50 ms and
/// stepped through its session; what a session sends goes to the neighbour's mesh id. Anything
/// from a neighbour we did not recognise, or that does not open, is dropped.
public actor FeedMeshSync {
    let feeds: FeedService
    let mesh: MeshService
    let emit: @Sendable (NodeUpdate) -> Void
    let logger = Logger(label: "burrow.feed")

    static let firstSessionDelay: ClosedRange<UInt64> = 0...1_000
    static let sessionInterval: UInt64 = 60_000
    static let batchWindow: Duration = .milliseconds(50)
    /// Our side answers a peer's new session unless ours opened this recently.
    static let answerGap: UInt64 = 700
    /// A session that left us behind what the peer offered is opened again this soon.
    static let retryDelay: UInt64 = 3_000
    static let maximumRetries = 3
    /// A neighbour not heard for this long is gone (mesh.md's peer silence).
    static let silence: UInt64 = 30_000
    /// Neighbours kept at once (each has a link, a session and a batch): a bound a crowd of
    /// strangers cannot push, as only contacts' tags make a neighbour.
    static let maximumNeighbours = 64
    /// Packets waiting in one neighbour's batch.
    static let maximumBatch = 256

    struct Neighbour {
        let contact: [UInt8]
        let meshKey: [UInt8]
        let meshID: MeshID
        var pairKey: [UInt8]
        var previousPairKey: [UInt8]?
        var lastHeard: UInt64
        var nextSessionAt: UInt64
        var link: FeedLink
        var linkOwnKey: [UInt8]
        var session: FeedSession?
        var openedAt: UInt64 = 0
        /// The peer's have_seq of our own feed, from its last request.
        var holdsOurs: UInt32?
        /// Quick retries since the last progress (a refused chain must not keep us asking).
        var retries = 0
        var batch: [(type: SyncFrameType, payload: [UInt8])] = []
        var flushing = false
    }

    private var neighbours: [[UInt8]: Neighbour] = [:]
    /// Tags heard that matched no contact yet (a pair key may be made a moment later), newest
    /// kept, bounded as neighbours are.
    private var unmatched: [[UInt8]: (tag: [UInt8], heardAt: UInt64)] = [:]
    private var contacts: [FeedService.PresenceContact] = []
    private var ownPresence: [UInt8]?

    public init(feeds: FeedService, mesh: MeshService, emit: @escaping @Sendable (NodeUpdate) -> Void) {
        self.feeds = feeds
        self.mesh = mesh
        self.emit = emit
    }

    static func now() -> UInt64 { UInt64(max(0, Date().timeIntervalSince1970 * 1000)) }

    /// Runs until cancelled: deliveries in, sessions on schedule, presence keys refreshed.
    public func run() async {
        refreshPresence()
        let ticker = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                await self?.tick()
            }
        }
        defer {
            ticker.cancel()
            mesh.setFeedPresence(nil)
        }
        for await delivery in mesh.deliveries() {
            switch delivery.content {
            case .presence(let tag): heard(tag: tag, meshKey: delivery.packet.meshKey)
            case .feed(let payload):
                guard let type = SyncFrameType(rawValue: delivery.packet.type.rawValue) else { continue }
                received(type: type, payload: payload, from: delivery.packet.meshKey)
            default: continue
            }
        }
    }

    private var lastRefresh: UInt64 = 0
    private var lastGroupSecrets: UInt64 = 0
    private var ownTop: Int64?
    private var sawOwnTop = false
    /// How often contacts' presence keys are read again (a pair key just made counts soon).
    static let presenceRefresh: UInt64 = 2_000

    /// Our `P` (announced) and the contacts we can recognise, read again every 2 s.
    private func refreshPresence() {
        do {
            // Epoch secrets are kept long after an epoch ends: a look every 30 s is enough.
            if lastRefresh == 0 || Self.now() >= lastGroupSecrets + 30_000 {
                try feeds.recordGroupSecrets()
                lastGroupSecrets = Self.now()
            }
            let presence = try feeds.presence()
            let before = contacts.count
            contacts = presence.contacts
            if contacts.count != before {
                for (meshKey, heard) in unmatched { self.heard(tag: heard.tag, meshKey: meshKey, at: heard.heardAt) }
            }
            rekeyNeighbours()
            if presence.own != ownPresence {
                ownPresence = presence.own
                mesh.setFeedPresence(presence.own)
            }
        } catch {
            logger.warning("feed presence not read", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        lastRefresh = Self.now()
    }

    /// A neighbour whose contact has a new pair key gets a new link sealed with it (the old key
    /// still opens what the peer sealed before it had the new one, 8.3).
    private func rekeyNeighbours() {
        for (meshKey, var neighbour) in neighbours {
            guard let contact = contacts.first(where: { $0.identityKey == neighbour.contact }), contact.pairKey != neighbour.pairKey else { continue }
            neighbour.pairKey = contact.pairKey
            neighbour.previousPairKey = contact.previousPairKey
            neighbour.link = neighbour.link.rekeyed(pairKey: contact.pairKey, previousPairKey: contact.previousPairKey,
                                                    ownMeshKey: neighbour.linkOwnKey, peerMeshKey: meshKey)
            neighbour.session = nil
            neighbours[meshKey] = neighbour
        }
    }

    private func heard(tag: [UInt8], meshKey: [UInt8], at now: UInt64 = FeedMeshSync.now()) {
        if var known = neighbours[meshKey] {
            known.lastHeard = max(known.lastHeard, now)
            neighbours[meshKey] = known
            return
        }
        guard neighbours.count < Self.maximumNeighbours,
              let contact = contacts.first(where: { FeedPresence.tag(presenceKey: $0.presenceKey, meshKey: meshKey) == tag }) else {
            unmatched[meshKey] = (tag, now)
            if unmatched.count > Self.maximumNeighbours, let oldest = unmatched.min(by: { $0.value.heardAt < $1.value.heardAt })?.key {
                unmatched[oldest] = nil
            }
            return
        }
        unmatched[meshKey] = nil
        logger.debug("a contact's presence tag was heard", metadata: ["neighbours": "\(neighbours.count + 1)"])
        let own = mesh.meshKey
        neighbours[meshKey] = Neighbour(
            contact: contact.identityKey, meshKey: meshKey, meshID: MeshID(meshKey: meshKey), pairKey: contact.pairKey, previousPairKey: contact.previousPairKey,
            lastHeard: now, nextSessionAt: now + UInt64.random(in: Self.firstSessionDelay),
            link: Self.link(contact.pairKey, previous: contact.previousPairKey, own: own, peer: meshKey),
            linkOwnKey: own.publicKey)
    }

    static func link(_ pairKey: [UInt8], previous: [UInt8]?, own: MeshKey, peer: [UInt8]) -> FeedLink {
        FeedLink(pairKey: pairKey, previousPairKey: previous, ownMeshKey: own.publicKey, peerMeshKey: peer, ownMeshID: own.id.bytes, peerMeshID: MeshID(meshKey: peer).bytes)
    }

    /// Our mesh key rotated: a new pair of keys, a new link with counters from 0 (8.3).
    private func currentLink(_ neighbour: inout Neighbour) {
        let own = mesh.meshKey
        guard own.publicKey != neighbour.linkOwnKey else { return }
        neighbour.link = Self.link(neighbour.pairKey, previous: neighbour.previousPairKey, own: own, peer: neighbour.meshKey)
        neighbour.linkOwnKey = own.publicKey
        neighbour.session = nil
    }

    private func received(type: SyncFrameType, payload: [UInt8], from meshKey: [UInt8]) {
        guard var neighbour = neighbours[meshKey] else {
            logger.debug("a feed packet from an unrecognised neighbour was dropped")
            return
        }
        guard neighbour.batch.count < Self.maximumBatch else {
            logger.debug("a feed packet was dropped: the neighbour's batch is full")
            return
        }
        neighbour.batch.append((type, payload))
        neighbour.lastHeard = Self.now()
        let start = !neighbour.flushing
        neighbour.flushing = true
        neighbours[meshKey] = neighbour
        if start {
            Task {
                try? await Task.sleep(for: Self.batchWindow)
                await self.flush(meshKey)
            }
        }
    }

    /// One round for a neighbour: its batch through the session, what the session sends out.
    private func flush(_ meshKey: [UInt8]) async {
        guard var neighbour = neighbours[meshKey] else { return }
        let batch = neighbour.batch
        neighbour.batch = []
        neighbour.flushing = false
        currentLink(&neighbour)
        var session = neighbour.session ?? FeedSession(link: neighbour.link, peerFeedID: FeedKeys.feedID(identityKey: neighbour.contact))
        var sent: [FeedPacket] = []
        var fresh: [(feedID: [UInt8], sequence: UInt32)] = []
        let now = Self.now()
        do {
            let store = try StoredFeedSync(service: feeds)
            // Requests only open a session (8.5): the peer started one, and we run our side of
            // it too (our round 1), unless ours opened a moment ago (the peer's session then
            // answers ours, and answering again would bounce between us). This is how a new
            // entry travels at once.
            if batch.contains(where: { $0.type == .request }), now >= neighbour.openedAt + Self.answerGap {
                session = FeedSession(link: session.link, peerFeedID: FeedKeys.feedID(identityKey: neighbour.contact))
                sent += try session.open(store)
                neighbour.openedAt = now
                neighbour.nextSessionAt = now + Self.sessionInterval
            }
            let step = try session.step(delivered: batch, store: store)
            for case .dropped(let error) in step.deliveries { logger.debug("a feed packet was dropped", metadata: ["reason": "\(error.rawValue)"]) }
            sent += step.sent
            fresh = store.takeAccepted()
            // The peer offered more than arrived (a packet lost on the air, or dropped before
            // we knew the peer): ask again in a few seconds rather than at the next minute.
            let behind = session.chunksArrived < session.offered
            // A contact's offer of our own feed with nothing newer than we hold: it is back.
            if let offer = session.offers[store.ownFeedID], store.followedFeedIDs.contains(store.ownFeedID),
               offer.haveSequence == SyncFrame.nothing || (store.summary(of: store.ownFeedID).accepted?.upperBound).map({ $0 >= offer.haveSequence }) == true {
                feeds.caughtUp()
            }
            if let holds = session.peerHolds[store.ownFeedID] { neighbour.holdsOurs = holds }
            if !fresh.isEmpty { neighbour.retries = 0 }
            if behind, neighbour.retries < Self.maximumRetries {
                neighbour.retries += 1
                neighbour.nextSessionAt = min(neighbour.nextSessionAt, now + Self.retryDelay)
            }
        } catch {
            logger.warning("a feed session step failed", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        neighbour.link = session.link
        neighbour.session = session
        neighbours[meshKey] = neighbour
        logger.debug("feed session round", metadata: ["batch": "\(batch.map { $0.type })", "sent": "\(sent.map(\.type))", "fresh": "\(fresh.count)"])
        await send(sent, to: neighbour.meshID)
        announce(fresh)
    }

    private func announce(_ fresh: [(feedID: [UInt8], sequence: UInt32)]) {
        guard !fresh.isEmpty else { return }
        do {
            // A group entry without its key: a group joined since the last look at the
            // secrets (every 30 s) is looked at now, at most every 2 s.
            if Self.now() >= lastGroupSecrets + Self.presenceRefresh, try feeds.waitForGroupSecret(fresh) {
                try feeds.recordGroupSecrets()
                lastGroupSecrets = Self.now()
            }
            for entry in try feeds.readable(fresh) { emit(.feed(entry)) }
            // What the secrets just opened besides these is shown too, and these only once.
            for entry in feeds.takeReopened(excluding: fresh) { emit(.feed(entry)) }
        } catch {
            logger.warning("new feed entries not shown", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
    }

    /// Packets go one after the other; the mesh paces each link under its neighbour's budget
    /// and makes a local sender wait while the link's queue is full (`MeshService.send`), so a
    /// long session at MTU 23 loses nothing and leaves room on the link for DMs.
    private func send(_ packets: [FeedPacket], to recipient: MeshID) async {
        for packet in packets {
            guard let type = PacketType(rawValue: packet.type.rawValue) else { continue }
            do { try await mesh.send(type: type, recipient: recipient, payload: packet.payload) } catch {
                logger.notice("a feed packet was not sent", metadata: ["error": "\(error)"])
                return
            }
        }
    }

    /// Sessions that are due open (round 1); silent neighbours go; presence is read again.
    private func tick() async {
        let now = Self.now()
        // Entries a key arrived for after them (a DM batch, a group joined) are shown now.
        for entry in feeds.takeReopened() { emit(.feed(entry)) }
        if now >= lastRefresh + Self.presenceRefresh {
            refreshPresence()
            // Feed keys owed to a contact (a reply decided while a command held the node)
            // leave within seconds, not at the next upkeep.
            // The flush goes through `run`'s sender lane, one round at a time with its others.
            do {
                if try feeds.queueFeedKeys() { feeds.directMessages.liveSender.kick(feeds.directMessages, deletions: [], timeout: .seconds(2)) }
            } catch {
                logger.warning("feed keys not queued", metadata: ["error": "\(BurrowNode.describe(error))"])
            }
        }
        // A new entry of ours goes to the neighbours at once, not at their next session.
        do {
            let top = try feeds.store.transaction { tx in try tx.feeds.summary(feedID: try feeds.identity(tx).feedID).accepted?.upperBound }
            if sawOwnTop, top != ownTop { for key in neighbours.keys { neighbours[key]?.nextSessionAt = now } }
            // A neighbour that still lacks our newest entry a few seconds after our last
            // session gets another (its answer may have crossed ours), a few times at most.
            if let top, let ours = UInt32(exactly: top) {
                for (key, neighbour) in neighbours where neighbour.retries < Self.maximumRetries
                    && now >= neighbour.openedAt + Self.retryDelay && neighbour.nextSessionAt > now
                    && (neighbour.holdsOurs.map { $0 == SyncFrame.nothing || $0 < ours } ?? false) {
                    neighbours[key]?.retries += 1
                    neighbours[key]?.nextSessionAt = now
                }
            }
            ownTop = top
            sawOwnTop = true
        } catch {
            logger.warning("the own feed was not read", metadata: ["error": "\(BurrowNode.describe(error))"])
        }
        for (key, neighbour) in neighbours where now > neighbour.lastHeard + Self.silence { neighbours[key] = nil }
        for (key, heard) in unmatched where now > heard.heardAt + Self.silence { unmatched[key] = nil }
        for key in neighbours.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) {
            guard var neighbour = neighbours[key], now >= neighbour.nextSessionAt else { continue }
            currentLink(&neighbour)
            var session = FeedSession(link: neighbour.link, peerFeedID: FeedKeys.feedID(identityKey: neighbour.contact))
            var sent: [FeedPacket] = []
            do { sent = try session.open(try StoredFeedSync(service: feeds)) } catch {
                logger.warning("a feed session did not open", metadata: ["error": "\(BurrowNode.describe(error))"])
            }
            neighbour.link = session.link
            neighbour.session = session
            neighbour.openedAt = now
            neighbour.nextSessionAt = now + Self.sessionInterval
            neighbours[key] = neighbour
            logger.debug("feed session opened", metadata: ["sent": "\(sent.map(\.type))"])
            await send(sent, to: neighbour.meshID)
        }
    }
}
