import Nostr

/// The mesh router (sections 4, 6, 7, 9): a state machine fed frames and time that returns
/// actions. No sockets, clocks or randomness of its own: the host passes `now` (ms since the
/// epoch) with every input and injects the random source, so a run replays exactly.
///
/// Inputs: `linkUp`, `linkDown`, `receive`, `tick` (at `nextDeadline` or on any schedule),
/// `send*`, `stop`. Outputs: `MeshAction`s (frames to write, packets to deliver).
public struct MeshRouter<Random: RandomNumberGenerator & Sendable>: Sendable {
    public private(set) var identity: MeshIdentity
    public var configuration: MeshConfiguration
    public private(set) var counters = MeshCounters()
    /// Public Pigeon identity keys of this node: DMs to their daily tags are delivered here.
    public var dmIdentityKeys: [[UInt8]] = []
    /// While an invite this node hosts or joins is open, its mesh key does not rotate.
    public var inviteOpen = false

    var random: Random
    var links: [LinkID: LinkState] = [:]
    var seen: SeenCache
    var seenEvents: SeenCache
    public private(set) var store = PacketStore()
    var pending: [SeenKey: PendingForward] = [:]
    /// Timestamp of each sender's latest announce and beacon (7.4).
    var lastAnnounce: [MeshID: UInt64] = [:]
    var lastBeacon: [MeshID: UInt64] = [:]
    /// Forwarding budget per originator (7.4).
    var originators: [MeshID: TokenBucket] = [:]
    /// Sync wants answered, over all links (`MeshConfiguration.wantsPerMinute`).
    var wantsAnswered: TokenBucket
    var nextAnnounce: UInt64
    /// Links this router asked its host to close (`MeshAction.close`) that are not down yet:
    /// asked once.
    var closing: Set<LinkID> = []

    struct LinkState: Sendable {
        var mtu: Int
        /// When it came up: of two connections to one neighbour, the older stays (11.1).
        let upAt: UInt64
        /// A receive link: frames arrive on it with their own budgets and reassembly (one
        /// sender's), but what is sent on it goes out on this link, whose air it shares (the
        /// centrals subscribed to a BLE peripheral all hear one notification).
        var sendsOn: LinkID?
        var peers: [MeshID: PeerInfo] = [:]
        var reassembler = Reassembler()
        var frames: TokenBucket
        var bytes: TokenBucket
        var offersSent: TokenBucket
        var offersReceived: TokenBucket
        /// Sync wants answered on this link (`MeshConfiguration.wantsPerLinkPerMinute`).
        var wantsAnswered: TokenBucket
        var announceAt: UInt64?
        /// Peers with `store` and when to next ask them for an offer.
        var syncAt: [MeshID: UInt64] = [:]
    }

    /// Ids of packets first heard with TTL 1 (not forwarded), most recent last: a copy with a
    /// higher TTL arriving later is forwarded after all.
    var heldBack: [HeldBack] = []

    struct HeldBack: Sendable {
        let key: SeenKey
        /// Sync wants of it so far (at most `MeshConfiguration.maxRefetches`).
        var wants = 0
    }

    struct PendingForward: Sendable {
        var packet: Packet
        var heardFrom: Set<LinkID>
        /// The highest TTL heard on each of those links.
        var heardTTL: [LinkID: UInt8]
        let due: UInt64
    }

    public init(identity: MeshIdentity, configuration: MeshConfiguration = MeshConfiguration(), now: UInt64, random: Random) {
        self.identity = identity
        self.configuration = configuration
        self.random = random
        seen = SeenCache(capacity: configuration.seenCapacity)
        seenEvents = SeenCache(capacity: configuration.seenCapacity)
        let wants = Double(MeshConfiguration.wantsPerMinute)
        wantsAnswered = TokenBucket(rate: wants / 60, burst: wants, now: now)
        nextAnnounce = now
        nextAnnounce = now &+ announceDelay()
    }

    // MARK: Links

    /// A link is up. With `sendsOn`, it is a receive link sharing another link's air: frames
    /// from it are budgeted and reassembled on their own (each BLE central writing to our
    /// peripheral is one), while packets for its peers go out on `sendsOn`, counted once in
    /// flooding and never announced on separately.
    public mutating func linkUp(_ link: LinkID, mtu: Int, sendsOn: LinkID? = nil, now: UInt64) {
        let mtu = min(max(mtu, MeshProtocol.minMTU), MeshProtocol.maxFrame)
        let sendsOn = sendsOn == link ? nil : sendsOn
        if let existing = links[link], existing.sendsOn == sendsOn {
            // Up again with a new MTU: budgets, peers and assemblies stay.
            links[link]?.mtu = mtu
            return
        }
        links[link] = LinkState(
            mtu: mtu, upAt: now, sendsOn: sendsOn,
            frames: TokenBucket(rate: 100, burst: 200, now: now),
            bytes: TokenBucket(rate: 32 * 1024, burst: 64 * 1024, now: now),
            offersSent: TokenBucket(rate: 8.0 / 60, burst: 8, now: now),
            offersReceived: TokenBucket(rate: 8.0 / 60, burst: 8, now: now),
            wantsAnswered: TokenBucket(rate: Double(MeshConfiguration.wantsPerLinkPerMinute) / 60,
                                       burst: Double(MeshConfiguration.wantsPerLinkPerMinute), now: now),
            announceAt: configuration.announces && sendsOn == nil
                ? now &+ UInt64.random(in: 0...MeshConfiguration.newLinkAnnounceDelay, using: &random) : nil
        )
    }

    /// The link whose air a packet for `link`'s peers goes out on.
    func airLink(_ link: LinkID) -> LinkID { links[link]?.sendsOn ?? link }

    public mutating func linkDown(_ link: LinkID) {
        links[link] = nil
        closing.remove(link)
        for key in pending.keys {
            pending[key]?.heardFrom.remove(link)
            pending[key]?.heardTTL[link] = nil
        }
    }

    public var linkStatus: [LinkStatus] {
        links.map { LinkStatus(link: $0.key, mtu: $0.value.mtu, peers: $0.value.peers.values.sorted { $0.id < $1.id }, sendsOn: $0.value.sendsOn) }
            .sorted { $0.link < $1.link }
    }

    /// The sum of what the router holds for others, for the memory-bound tests.
    public var footprint: (seen: Int, seenEvents: Int, pending: Int, assemblies: Int, assemblyBytes: Int, store: Int, senders: Int) {
        (seen.count, seenEvents.count, pending.count, links.values.reduce(0) { $0 + $1.reassembler.count },
         links.values.reduce(0) { $0 + $1.reassembler.bufferedBytes }, store.bytes,
         lastAnnounce.count + lastBeacon.count + originators.count)
    }

    // MARK: Receiving (section 4)

    /// Processes one frame from `link`. A refused frame is counted under its spec name and
    /// changes nothing else; the refusal is returned for tests and logs.
    @discardableResult
    public mutating func receive(_ frame: [UInt8], on link: LinkID, now: UInt64, actions: inout [MeshAction]) -> MeshError? {
        counters.framesIn += 1
        do {
            try process(frame, on: link, now: now, actions: &actions)
            return nil
        } catch {
            counters.drop(error)
            return error
        }
    }

    public mutating func receive(_ frame: [UInt8], on link: LinkID, now: UInt64) -> [MeshAction] {
        var actions: [MeshAction] = []
        receive(frame, on: link, now: now, actions: &actions)
        return actions
    }

    private mutating func process(_ frame: [UInt8], on link: LinkID, now: UInt64, actions: inout [MeshAction]) throws(MeshError) {
        guard frame.count <= MeshProtocol.maxFrame else { throw .frameTooLarge }
        guard var state = links[link] else { throw .rateLimited }
        guard state.frames.take(now: now), state.bytes.take(Double(frame.count), now: now) else {
            links[link] = state
            throw .rateLimited
        }
        let unverified: UnverifiedPacket
        if FragmentFrame.isFragment(frame) {
            let fragment = try FragmentFrame.decode(frame)
            do {
                guard let completed = try state.reassembler.add(fragment, now: now, feeds: configuration.feeds) else {
                    links[link] = state
                    return
                }
                links[link] = state
                unverified = completed
            } catch {
                links[link] = state
                throw error
            }
        } else {
            links[link] = state
            unverified = try UnverifiedPacket.decode(frame, feeds: configuration.feeds)
        }
        try accept(unverified, on: link, now: now, actions: &actions)
    }

    /// Steps 4–9 for a structurally sound packet.
    private mutating func accept(_ unverified: UnverifiedPacket, on link: LinkID, now: UInt64, actions: inout [MeshAction]) throws(MeshError) {
        try unverified.checkFreshness(now: now)
        if seen.contains(unverified.id, now: now) {
            noteDuplicate(unverified, on: link, now: now, actions: &actions)
            throw .duplicate
        }
        let packet = try unverified.verified()
        seen.insert(packet.id, expiresAt: packet.timestamp &+ packet.type.pastBound, now: now)

        switch packet.type {
        case .announce, .inviteBeacon:
            // One per second per sender, by timestamp.
            let record = packet.type == .announce ? lastAnnounce[packet.sender] : lastBeacon[packet.sender]
            if let previous = record, packet.timestamp < previous &+ 1000 { throw .rateLimited }
            if packet.type == .announce { lastAnnounce[packet.sender] = packet.timestamp } else { lastBeacon[packet.sender] = packet.timestamp }
            pruneSenderRecords(now: now)
        default:
            break
        }

        let forMe = isAddressedToMe(packet, now: now)
        var content: MeshDelivery.Content?
        switch packet.type {
        case .announce:
            let announce = try Announce.decode(packet.payload)
            learn(announce, from: packet.sender, on: link, now: now, actions: &actions)
            if configuration.feeds, let tag = announce.presenceTag { content = .presence(tag: tag) }
        case .leave:
            links[link]?.peers[packet.sender] = nil
            links[link]?.syncAt[packet.sender] = nil
        case .dm:
            guard !packet.payload.isEmpty else { throw .badPayload }
            if forMe { content = .dm(frame: packet.payload) }
        case .nostrEvent:
            let event = try CarriedEvent.verify(packet.payload)
            let eventKey = SeenKey(event.id.bytes)
            if seenEvents.contains(eventKey, now: now) { throw .duplicate }
            seenEvents.insert(eventKey, expiresAt: packet.timestamp &+ packet.type.pastBound, now: now)
            content = .nostrEvent(event)
        case .syncRequest:
            let request = try SyncRequest.decode(packet.payload)
            if forMe { try answer(request, from: packet.sender, on: link, now: now, actions: &actions) }
        case .syncOffer:
            let offer = try SyncOffer.decode(packet.payload)
            if forMe {
                guard links[link]?.offersReceived.take(now: now) ?? false else { throw .rateLimited }
                want(offer, from: packet.sender, on: link, now: now, actions: &actions)
            }
        case .inviteBeacon:
            let beacon = try UnverifiedBeacon.decode(packet.payload).verified(meshKey: packet.meshKey)
            content = .beacon(beacon, hops: max(0, 3 - Int(packet.ttl)))
        case .joinHello, .joinChallenge, .joinRequest, .joinWelcome, .joinDone, .joinError:
            let message = try JoinMessage.decode(type: packet.type, payload: packet.payload)
            if forMe { content = .join(message) }
        case .feedRequest, .feedOffer, .feedChunk, .feedAck, .feedRange:
            // Sealed between two contacts (feed.md 8.3): the node opens it, or drops it.
            if forMe { content = .feed(payload: packet.payload) }
        }

        if let content {
            counters.delivered += 1
            actions.append(.deliver(MeshDelivery(packet: packet, link: link, content: content)))
        }
        if packet.type.isCarried, !forMe, packet.ttl >= 2, configuration.capabilities.contains(.store) {
            store.insert(packet.with(ttl: packet.ttl - 1), now: now)
        }
        scheduleForward(packet, from: link, forMe: forMe, now: now)
        if packet.ttl == 1, !packet.type.isLinkLocal, !forMe {
            heldBack.append(HeldBack(key: packet.id.key))
            if heldBack.count > MeshConfiguration.maxHeldBack { heldBack.removeFirst(heldBack.count - MeshConfiguration.maxHeldBack) }
        }
    }

    /// A duplicate during the jitter tells us a neighbour already has it (7.1). It may also
    /// have come a shorter way than the first copy (jitter lets a longer path win): until the
    /// packet is sent, the highest TTL heard is the one it leaves with, so a flood still reaches
    /// every node within TTL. Once sent, its bytes never change (section 9).
    ///
    /// A copy of an announce (link-local, never forwarded) heard on a second link says its
    /// sender is a neighbour there too: the peer is recorded on that link as well, which is how
    /// a duplicate connection shows (the same announce goes out on every link of its sender).
    private mutating func noteDuplicate(_ duplicate: UnverifiedPacket, on link: LinkID, now: UInt64, actions: inout [MeshAction]) {
        // Verified only where the sender is not yet a peer: a replayed announce costs a hash.
        if duplicate.type == .announce, let state = links[link], state.peers[duplicate.sender] == nil,
           let packet = try? duplicate.verified(), let announce = try? Announce.decode(packet.payload) {
            learn(announce, from: packet.sender, on: link, now: now, actions: &actions)
        }
        let key = duplicate.id.key
        if var forward = pending[key] {
            let air = airLink(link)
            forward.heardFrom.insert(air)
            forward.heardTTL[air] = max(forward.heardTTL[air] ?? 0, duplicate.ttl)
            if duplicate.ttl >= 2, duplicate.ttl - 1 > forward.packet.ttl {
                forward.packet = forward.packet.with(ttl: duplicate.ttl - 1)
                store.raiseTTL(of: forward.packet)
            }
            pending[key] = forward
        } else if duplicate.ttl >= 2, let index = heldBack.firstIndex(where: { $0.key == key }), let packet = try? duplicate.verified() {
            // First heard with TTL 1 (neither forwarded nor stored), now with more.
            heldBack.remove(at: index)
            if packet.type.isCarried, configuration.capabilities.contains(.store) { store.insert(packet.with(ttl: packet.ttl - 1), now: now) }
            scheduleForward(packet, from: link, forMe: false, now: now)
        }
    }

    /// This node's mesh ids (the previous one for 60 s) and the DM tags of its Pigeon keys.
    func isAddressedToMe(_ packet: Packet, now: UInt64) -> Bool {
        guard let recipient = packet.recipient else { return false }
        if identity.answers(to: recipient, now: now) { return true }
        if packet.type == .dm {
            return dmIdentityKeys.contains { DMTag.tag(identityKey: $0, timestamp: packet.timestamp) == recipient }
        }
        return false
    }

    // MARK: Forwarding (section 7)

    private mutating func scheduleForward(_ packet: Packet, from link: LinkID, forMe: Bool, now: UInt64) {
        guard FloodingRule.forwards(type: packet.type, ttl: packet.ttl, addressedToMe: forMe,
                                    relay: configuration.capabilities.contains(.relay)) else { return }
        var budget = originators[packet.sender] ?? TokenBucket(rate: 10, burst: 30, now: now)
        let allowed = budget.take(now: now)
        originators[packet.sender] = budget
        pruneSenderRecords(now: now)
        guard allowed, pending.count < MeshConfiguration.maxPendingForwards else { return }
        let jitter = packet.recipient == nil ? MeshConfiguration.broadcastJitter : MeshConfiguration.directedJitter
        let air = airLink(link)
        pending[packet.id.key] = PendingForward(
            packet: packet.with(ttl: packet.ttl - 1), heardFrom: [air], heardTTL: [air: packet.ttl],
            due: now &+ UInt64.random(in: jitter, using: &random)
        )
    }

    /// The flooding rule's view of the links at `now`: one per air link, a receive link's
    /// peers counted with the link it sends on.
    func floodLinks(now: UInt64) -> [FloodLink] {
        var peers: [LinkID: [MeshID]] = [:]
        var neighbours: [LinkID: [MeshID: [MeshID]]] = [:]
        for (id, state) in links {
            let air = state.sendsOn ?? id
            guard links[air] != nil else { continue }
            peers[air, default: []] += state.peers.keys
            for (peer, info) in state.peers where now <= info.lastHeard &+ MeshConfiguration.neighbourListFreshness {
                neighbours[air, default: [:]][peer] = info.neighbours
            }
        }
        return peers.map { FloodLink(link: $0.key, peers: $0.value, neighbours: neighbours[$0.key] ?? [:]) }
    }

    /// Writes `packet` on `link`'s air (a receive link's sends go on the link it shares).
    mutating func transmit(_ packet: Packet, on link: LinkID, actions: inout [MeshAction]) {
        let air = airLink(link)
        guard let mtu = links[air]?.mtu else { return }
        for frame in FragmentFrame.frames(for: packet, mtu: mtu) {
            counters.framesOut += 1
            actions.append(.transmit(link: air, frame: frame))
        }
    }

    // MARK: Time

    /// Sends due forwards, announces and sync requests; expires peers, assemblies and store
    /// entries; rotates the mesh key when due.
    public mutating func tick(now: UInt64, actions: inout [MeshAction]) {
        for (key, forward) in pending where forward.due <= now {
            pending[key] = nil
            let targets = FloodingRule.links(
                recipient: forward.packet.recipient, links: floodLinks(now: now), heardFrom: forward.heardFrom,
                covering: configuration.ttlAwareCovering
                    ? Set(forward.heardTTL.filter { $0.value >= forward.packet.ttl }.keys) : nil,
                pruned: configuration.pruning
            )
            if !targets.isEmpty { counters.forwarded += 1 }
            for link in targets { transmit(forward.packet, on: link, actions: &actions) }
        }
        var rotated = false
        if identity.rotateIfDue(now: now, inviteOpen: inviteOpen, using: &random) { rotated = true }
        for id in links.keys.sorted() {
            guard var state = links[id] else { continue }
            state.reassembler.expire(now: now)
            for (peer, info) in state.peers where now > info.lastHeard &+ MeshConfiguration.peerSilence {
                state.peers[peer] = nil
                state.syncAt[peer] = nil
            }
            let announceDue = state.announceAt.map { $0 <= now } ?? false
            if announceDue { state.announceAt = nil }
            var syncPeers: [MeshID] = []
            for (peer, due) in state.syncAt where due <= now {
                state.syncAt[peer] = now &+ MeshConfiguration.syncInterval
                syncPeers.append(peer)
            }
            links[id] = state
            if announceDue || (rotated && configuration.announces && state.sendsOn == nil) { sendAnnounce(on: id, now: now, actions: &actions) }
            for peer in syncPeers.sorted() { requestOffer(from: peer, on: id, before: 0, now: now, actions: &actions) }
        }
        if configuration.announces, now >= nextAnnounce {
            nextAnnounce = now &+ announceDelay()
            for id in links.keys.sorted() where links[id]?.sendsOn == nil { sendAnnounce(on: id, now: now, actions: &actions) }
        }
        store.expire(now: now)
        seen.purge(now: now)
        seenEvents.purge(now: now)
    }

    public mutating func tick(now: UInt64) -> [MeshAction] {
        var actions: [MeshAction] = []
        tick(now: now, actions: &actions)
        return actions
    }

    /// The earliest time `tick` has work to do.
    public var nextDeadline: UInt64? {
        var deadlines = pending.values.map(\.due)
        if configuration.announces, !links.isEmpty { deadlines.append(nextAnnounce) }
        for state in links.values {
            if let at = state.announceAt { deadlines.append(at) }
            deadlines.append(contentsOf: state.syncAt.values)
        }
        return deadlines.min()
    }

    private mutating func announceDelay() -> UInt64 {
        MeshConfiguration.announceInterval - MeshConfiguration.announceSpread
            + UInt64.random(in: 0...(2 * MeshConfiguration.announceSpread), using: &random)
    }

    private mutating func pruneSenderRecords(now: UInt64) {
        guard lastAnnounce.count + lastBeacon.count + originators.count > MeshConfiguration.maxSenderRecords else { return }
        // Records older than the live window cannot affect a fresh packet's rate check, and an
        // idle originator's bucket has refilled (30 tokens at 10/s: 3 s).
        let horizon = now > Freshness.livePast ? now - Freshness.livePast : 0
        lastAnnounce = lastAnnounce.filter { $0.value >= horizon }
        lastBeacon = lastBeacon.filter { $0.value >= horizon }
        originators = originators.filter { _, bucket in
            var copy = bucket
            return !copy.take(bucket.burst, now: now)
        }
        // Still over (a flood of fresh ids): keep the bound by forgetting the oldest half.
        if lastAnnounce.count + lastBeacon.count + originators.count > MeshConfiguration.maxSenderRecords {
            let keep = MeshConfiguration.maxSenderRecords / 4
            lastAnnounce = Dictionary(uniqueKeysWithValues: lastAnnounce.sorted { $0.value > $1.value }.prefix(keep).map { ($0.key, $0.value) })
            lastBeacon = Dictionary(uniqueKeysWithValues: lastBeacon.sorted { $0.value > $1.value }.prefix(keep).map { ($0.key, $0.value) })
            originators = Dictionary(uniqueKeysWithValues: originators.prefix(keep).map { ($0.key, $0.value) })
        }
    }

    // MARK: Announce (7.3)

    private mutating func learn(_ announce: Announce, from sender: MeshID, on link: LinkID, now: UInt64, actions: inout [MeshAction]) {
        guard var state = links[link] else { return }
        let wasStore = state.peers[sender]?.capabilities.contains(.store) ?? false
        state.peers[sender] = PeerInfo(
            id: sender, capabilities: announce.capabilities, neighbours: announce.neighbours, nickname: announce.nickname,
            lastHeard: now
        )
        if announce.capabilities.contains(.store), !wasStore, state.syncAt[sender] == nil {
            state.syncAt[sender] = now &+ UInt64.random(in: 0...MeshConfiguration.syncFirstDelay, using: &random)
        } else if !announce.capabilities.contains(.store) {
            state.syncAt[sender] = nil
        }
        links[link] = state
        closeDuplicateConnections(to: sender, actions: &actions)
    }

    /// 11.1: "the larger mesh id closes a duplicate connection". A connection to `peer` is a
    /// link on which it is the only peer (a BLE connection either way, a UDP link; not a shared
    /// link). When this node's id is the larger and `peer` has more than one, the oldest stays
    /// and the others are closed — in 11.1's normal course the one the smaller id made at once
    /// stays and the larger's own, made 10 s later, goes. The smaller id closes nothing: its
    /// end goes down when the larger closes its own.
    private mutating func closeDuplicateConnections(to peer: MeshID, actions: inout [MeshAction]) {
        guard identity.current.id > peer else { return }
        let connections = links.filter { link, state in
            state.peers.count == 1 && state.peers[peer] != nil && !closing.contains(link)
        }
        guard connections.count > 1,
              let kept = connections.min(by: { ($0.value.upAt, $0.key) < ($1.value.upAt, $1.key) })?.key
        else { return }
        for link in connections.keys.sorted() where link != kept {
            closing.insert(link)
            actions.append(.close(link: link))
        }
    }

    /// Our neighbour list: up to 8 peers, most recently heard first.
    var neighbourList: [MeshID] {
        let peers = links.values.flatMap { $0.peers.values }
        var newest: [MeshID: UInt64] = [:]
        for peer in peers { newest[peer.id] = max(newest[peer.id] ?? 0, peer.lastHeard) }
        return newest.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.prefix(Announce.maxNeighbours).map(\.key)
    }

    private mutating func sendAnnounce(on link: LinkID, now: UInt64, actions: inout [MeshAction]) {
        let presenceTag = configuration.feeds ? configuration.presenceTag?(identity.current.publicKey) : nil
        let announce = Announce(nickname: configuration.nickname, capabilities: configuration.capabilities, neighbours: neighbourList,
                                presenceTag: presenceTag)
        guard let payload = try? announce.encoded(),
              let packet = try? Packet.sign(type: .announce, timestamp: now, recipient: nil, payload: payload, key: identity.current)
        else { return }
        seen.insert(packet.id, expiresAt: now &+ Freshness.livePast, now: now)
        transmit(packet, on: link, actions: &actions)
    }

    // MARK: Sending

    /// Originates a packet: it enters the seen-caches and goes at once on every link, or only
    /// on the recipient's link when the recipient is a neighbour (7.1). Carried packets are
    /// also stored (with their origin TTL) so sync can hand them to later neighbours.
    @discardableResult
    public mutating func send(
        type: PacketType, recipient: MeshID?, payload: [UInt8], now: UInt64, actions: inout [MeshAction]
    ) throws(MeshError) -> Packet {
        let packet = try Packet.sign(type: type, timestamp: now, recipient: recipient, payload: payload, key: identity.current)
        originate(packet, now: now, actions: &actions)
        return packet
    }

    /// A Pigeon frame to the holder of `identityKey` (its DM tag for `now`).
    @discardableResult
    public mutating func sendDM(_ frame: [UInt8], toIdentityKey identityKey: [UInt8], now: UInt64, actions: inout [MeshAction]) throws(MeshError) -> Packet {
        guard !frame.isEmpty else { throw .invalidArgument }
        return try send(type: .dm, recipient: DMTag.tag(identityKey: identityKey, timestamp: now), payload: frame, now: now, actions: &actions)
    }

    /// Whether the mesh already carried this Nostr event (received or sent, within 24 h): the
    /// node does not inject an event twice.
    public func hasSeenEvent(_ id: EventID, now: UInt64) -> Bool { seenEvents.contains(SeenKey(id.bytes), now: now) }

    /// A signed Nostr event of a carried kind (445, 1059, 443, 30443).
    @discardableResult
    public mutating func sendEvent(_ event: Event, now: UInt64, actions: inout [MeshAction]) throws(MeshError) -> Packet {
        guard CarriedEvent.carriedKinds.contains(event.kind) else { throw .invalidArgument }
        let eventKey = SeenKey(event.id.bytes)
        seenEvents.insert(eventKey, expiresAt: now &+ Freshness.carriedPast, now: now)
        return try send(type: .nostrEvent, recipient: nil, payload: event.jsonBytes, now: now, actions: &actions)
    }

    /// Resends an already signed packet of ours (invite retransmissions must keep their bytes
    /// only within one packet; a new timestamp needs `send`).
    mutating func originate(_ packet: Packet, now: UInt64, actions: inout [MeshAction]) {
        seen.insert(packet.id, expiresAt: packet.timestamp &+ packet.type.pastBound, now: now)
        if packet.type.isCarried, configuration.capabilities.contains(.store) { store.insert(packet, now: now) }
        for link in FloodingRule.links(recipient: packet.recipient, links: floodLinks(now: now), heardFrom: []) {
            transmit(packet, on: link, actions: &actions)
        }
    }

    /// Stopping the mesh: a leave on every link.
    public mutating func stop(now: UInt64, actions: inout [MeshAction]) {
        guard let packet = try? Packet.sign(type: .leave, timestamp: now, recipient: nil, payload: [], key: identity.current) else { return }
        for link in links.keys.sorted() where links[link]?.sendsOn == nil { transmit(packet, on: link, actions: &actions) }
    }
}
