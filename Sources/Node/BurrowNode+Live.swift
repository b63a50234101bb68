import Foundation
import Marmot
import Mesh
import Nostr
import RelayClient
import Store

/// How `burrow run` behaves.
public struct LiveOptions: Sendable {
    /// Each relay wait that makes no progress is bounded by this.
    public var timeout: Duration
    /// Seconds between self-updates of each group (0 turns them off).
    public var selfUpdatePeriod: Int64
    /// How often upkeep (KeyPackage renewal, self-updates) runs.
    public var maintenanceInterval: Duration
    /// How often the subscription is checked against the groups we read.
    public var refreshInterval: Duration
    /// Lock after this long without a command or a page action (`run --lock-after`).
    public var lockAfter: Duration?

    public init(timeout: Duration, selfUpdatePeriod: Int64 = BurrowNode.defaultSelfUpdatePeriod,
                maintenanceInterval: Duration = .seconds(60), refreshInterval: Duration = .seconds(2)) {
        self.timeout = timeout
        self.selfUpdatePeriod = selfUpdatePeriod
        self.maintenanceInterval = maintenanceInterval
        self.refreshInterval = refreshInterval
    }
}

extension BurrowNode {
    /// Mesh deliveries `run` holds while its loop is busy (`LiveInbox`); more are dropped and
    /// counted (`mesh status`: `dropped.queue_full`). The loop takes one per mailbox job, a few
    /// milliseconds each, while the radio's link budgets (7.4) let in at most a few hundred
    /// packets a second per link: 256 rides out seconds of backlog, and as a carried event is
    /// ≤ 64 KiB, holds at most 16 MiB.
    static let meshInboxCapacity = 256

    /// Relay events `run` holds while its loop is busy: beyond, they are dropped and counted,
    /// and the next tick runs a catch-up sync that fetches them again (issue 19: a flood of
    /// gift wraps must not grow the queue without bound). 1,024 events of at most 64 KiB (the
    /// pool's frame limit) hold at most 64 MiB; gift wraps are taken in batches of 256.
    static let relayInboxCapacity = 1_024
    static let giftWrapBatch = 256
    /// Units taken from an inbox just as the node locked, kept for the unlock (each at most a
    /// gift-wrap batch).
    static let lockedHeldUnits = 16

    private enum LiveInput: Sendable, Equatable {
        /// Relay events wait in their inbox.
        case relay
        /// Mesh events wait in the inbox.
        case mesh
        /// Mesh DM frames wait in the mesh bridge's queue.
        case meshDM
        case tick
    }

    /// Stays connected until the task is cancelled: syncs once, then processes live gift wraps
    /// and group events as they arrive, resubscribes when the set of groups changes, and runs
    /// upkeep. Everything touching the node is a job of `mailbox`, which forwarded commands share.
    public func runLive(mailbox: NodeMailbox, options: LiveOptions, emit: @escaping @Sendable (NodeUpdate) -> Void) async throws {
        guard !(try relays()).isEmpty else { throw NodeError.invalidInput("no relays configured: add one with `burrow relay add URL`") }
        do {
            let initial = try await mailbox.run { try await self.sync(timeout: options.timeout) }
            initial.updates.forEach(emit)
        } catch {
            // Relays may come back: the live subscription reconnects with backoff.
            emit(.error(SyncIssue(eventID: "", reason: "initial sync failed: \(Self.describe(error))")))
        }

        let (inputs, continuation) = AsyncStream<LiveInput>.makeStream()
        let ticker = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: options.refreshInterval)
                continuation.yield(.tick)
            }
        }
        let relayInbox = LiveInbox<Event>(capacity: Self.relayInboxCapacity)
        var relayDropsCaughtUp = 0
        var subscription: (key: String, pool: RelayPool, task: Task<Void, Never>)?
        var lastUpkeep = ContinuousClock.now - options.maintenanceInterval

        func refreshSubscription() async throws {
            let (filters, urls) = try await mailbox.run { (try self.liveFilters(), try self.liveRelays()) }
            let key = urls.sorted().joined(separator: " ") + "|" + filters.map { $0.tags.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined() }.joined(separator: ";")
            if subscription?.key == key { return }
            if let old = subscription {
                old.task.cancel()
                await old.pool.close()
            }
            var configuration = RelayConfiguration()
            configuration.authenticateWhenChallenged = false
            let pool = try RelayPool(urls: urls, authKeys: keys, configuration: configuration, logger: logger)
            let stream = pool.subscribe(filters)
            let task = Task {
                for await item in stream {
                    guard case .event(let event, _) = item else { continue }
                    switch relayInbox.push(event) {
                    case .wake: continuation.yield(.relay)
                    case .queued, .dropped: break
                    }
                }
            }
            subscription = (key, pool, task)
        }

        // Mesh events wait in a bounded inbox, DM frames in the mesh bridge's bounded queue (their
        // one route to the engine); the loop is woken once per batch through the same queue as
        // the relays' events.
        let meshInbox = LiveInbox<Event>(capacity: Self.meshInboxCapacity)
        let meshDMWake = LiveInbox<Bool>(capacity: 1)
        let meshReader = meshBridge.mesh.map { mesh in
            Task {
                for await delivery in mesh.deliveries() {
                    switch delivery.content {
                    case .nostrEvent(let event):
                        switch meshInbox.push(event) {
                        case .wake: continuation.yield(.mesh)
                        case .queued: break
                        case .dropped: mesh.countDropped(MeshService.queueFull)
                        }
                    case .dm(let frame):
                        // Queued at once: a `dm send` holding the mailbox while it waits for a
                        // handshake answer steps it from there.
                        self.meshBridge.enqueueMeshDM(frame, from: delivery.packet.sender)
                        if meshDMWake.push(true) == .wake { continuation.yield(.meshDM) }
                    case .beacon, .join, .feed, .presence: continue
                    }
                }
            }
        }
        // Units that met a lock between being taken and being processed, kept for the unlock.
        var heldWhileLocked: [InboundUnit] = []
        var wasLocked = false
        /// One unit through the pipeline as a mailbox job (store only), a group event's own
        /// unconfirmed commits settled in a job before it, then its effects, then its updates.
        /// A locked node keeps the unit (bounded: beyond, the catch-up at unlock fetches again
        /// what the relays hold, since no cursor moved while locked).
        func deliver(_ unit: InboundUnit) async throws {
            func hold() { if heldWhileLocked.count < Self.lockedHeldUnits { heldWhileLocked.append(unit) } }
            if isLocked { return hold() }
            if unit.carriesGroupEvents {
                try await mailbox.write { _ in await self.groups.recoverPendingCommits(timeout: options.timeout) }
            }
            let received = try await mailbox.write { writer -> InboundOutcome? in self.isLocked ? nil : self.receive(unit, as: writer) }
            guard var outcome = received else { return hold() }
            await carryOut(&outcome, timeout: options.timeout, mailbox: mailbox)
            outcome.report.updates.forEach(emit)
            if outcome.resubscribe { try await refreshSubscription() }
        }
        defer {
            ticker.cancel()
            meshReader?.cancel()
            continuation.finish()
        }
        try await refreshSubscription()
        for await input in inputs {
            if Task.isCancelled { break }
            // Locked: what arrives waits in its inbox (or on the relays) until the unlock.
            if isLocked, input != .tick { continue }
            do {
                switch input {
                case .relay:
                    // Gift wraps in batches; any other event in arrival order, after the wraps before it.
                    var wraps: [Event] = []
                    while !isLocked, let event = relayInbox.take() {
                        if Task.isCancelled { break }
                        if event.kind == Kind.giftWrap {
                            wraps.append(event)
                            if wraps.count >= Self.giftWrapBatch {
                                try await deliver(.relayEvents(wraps))
                                wraps = []
                            }
                            continue
                        }
                        if !wraps.isEmpty {
                            try await deliver(.relayEvents(wraps))
                            wraps = []
                        }
                        try await deliver(.relayEvents([event]))
                    }
                    if !wraps.isEmpty { try await deliver(.relayEvents(wraps)) }
                case .mesh:
                    while !isLocked, let event = meshInbox.take() {
                        if Task.isCancelled { break }
                        try await deliver(.meshEvent(event))
                    }
                case .meshDM:
                    while meshDMWake.take() != nil {}
                    try await deliver(.meshDMFrames)
                case .tick:
                    if isLocked {
                        if !wasLocked { emit(.lock(locked: true, reason: "locked")) }
                        wasLocked = true
                        continue
                    }
                    if wasLocked {
                        // Unlocked: what was held, then everything since the cursors, then the inboxes.
                        wasLocked = false
                        emit(.lock(locked: false, reason: "unlocked"))
                        let held = heldWhileLocked
                        heldWhileLocked = []
                        for unit in held { try await deliver(unit) }
                        if let report = try? await mailbox.run({ try await self.catchUpLive(timeout: options.timeout) }) {
                            report.updates.forEach(emit)
                        }
                        for wake in [LiveInput.relay, .mesh, .meshDM] { continuation.yield(wake) }
                    }
                    if let lockAfter = options.lockAfter, idleFor >= lockAfter {
                        try await mailbox.run { self.lock() }
                        wasLocked = true
                        emit(.lock(locked: true, reason: "idle"))
                        continue
                    }
                    // Relay events dropped while the loop was behind are fetched again.
                    let dropped = relayInbox.dropped
                    if dropped > relayDropsCaughtUp {
                        relayDropsCaughtUp = dropped
                        logger.warning("relay events dropped while busy; catching up", metadata: ["dropped": "\(dropped)"])
                        if let report = try? await mailbox.run({ try await self.catchUpLive(timeout: options.timeout) }) {
                            report.updates.forEach(emit)
                        }
                    }
                    try await refreshSubscription()
                    if ContinuousClock.now - lastUpkeep >= options.maintenanceInterval {
                        lastUpkeep = ContinuousClock.now
                        let report = try await mailbox.run {
                            await self.maintain(selfUpdatePeriod: options.selfUpdatePeriod, timeout: options.timeout)
                        }
                        report.updates.forEach(emit)
                    }
                }
            } catch StoreError.locked {
                // The node locked while this input was handled: the rest waits for the unlock
                // (held units, the relays' copies, the next upkeep).
                continue
            }
        }
        if let old = subscription {
            old.task.cancel()
            await old.pool.close()
        }
    }
}
