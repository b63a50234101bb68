import Nostr

/// Store-and-forward sync between neighbours (Docs/protocols/mesh.md 8.5, 9): asking a
/// neighbour for an offer of what it stores, answering offers and wants within their rate
/// limits, and wanting what we lack from an offer.
extension MeshRouter {
    mutating func requestOffer(from peer: MeshID, on link: LinkID, before: UInt64, now: UInt64, actions: inout [MeshAction]) {
        let since = now > PacketStore.lifetime ? now - PacketStore.lifetime : 0
        guard let payload = try? SyncRequest.offer(since: since, before: before, max: SyncRequest.maxOffer).encoded(),
              let packet = try? Packet.sign(type: .syncRequest, timestamp: now, recipient: peer, payload: payload, key: identity.current)
        else { return }
        seen.insert(packet.id, expiresAt: now &+ Freshness.livePast, now: now)
        transmit(packet, on: link, actions: &actions)
    }

    /// Answers an offer request (8 a minute per link, silently) or a want: up to 32 stored
    /// packets, so wants are limited per link and overall and the excess is `rate_limited`.
    mutating func answer(
        _ request: SyncRequest, from peer: MeshID, on link: LinkID, now: UInt64, actions: inout [MeshAction]
    ) throws(MeshError) {
        switch request {
        case .offer(let since, let before, let max):
            guard links[link]?.offersSent.take(now: now) ?? false else { return }
            let page = store.offer(since: since, before: before, max: Int(max))
            let offer = SyncOffer(
                oldest: page.entries.last?.timestamp ?? 0, more: page.more,
                entries: page.entries.map { SyncEntry(id: $0.id.id8, type: $0.type, recipient: $0.recipient ?? .broadcast) }
            )
            guard let payload = try? offer.encoded(),
                  let packet = try? Packet.sign(type: .syncOffer, timestamp: now, recipient: peer, payload: payload, key: identity.current)
            else { return }
            seen.insert(packet.id, expiresAt: now &+ Freshness.livePast, now: now)
            transmit(packet, on: link, actions: &actions)
        case .want(let ids):
            guard var state = links[link] else { throw .rateLimited }
            let allowed = state.wantsAnswered.take(now: now) && wantsAnswered.take(now: now)
            links[link] = state
            guard allowed else { throw .rateLimited }
            for id in ids {
                if let packet = store.packet(id8: id) { transmit(packet, on: link, actions: &actions) }
            }
        }
    }

    mutating func want(_ offer: SyncOffer, from peer: MeshID, on link: LinkID, now: UInt64, actions: inout [MeshAction]) {
        let myTags = Set(dmIdentityKeys.flatMap { DMTag.currentTags(identityKey: $0, now: now) })
        let carriesOthers = configuration.capabilities.contains(.store)
        var wanted: [MeshID] = []
        for entry in offer.entries where wanted.count < SyncRequest.maxWant {
            switch entry.type {
            case .nostrEvent: break
            case .dm: guard myTags.contains(entry.recipient) || carriesOthers else { continue }
            default: continue
            }
            guard !store.contains(id8: entry.id) else { continue }
            if seen.contains(id8: entry.id) {
                // Heard only with TTL 1 (neither stored nor forwarded): a copy from a neighbour
                // that stores it may carry more TTL, and reach the nodes beyond this one.
                guard configuration.refetchTTLOne,
                      let index = heldBack.firstIndex(where: { $0.key.high == entry.id.value }),
                      heldBack[index].wants < MeshConfiguration.maxRefetches
                else { continue }
                heldBack[index].wants += 1
            }
            wanted.append(entry.id)
        }
        if !wanted.isEmpty, let payload = try? SyncRequest.want(wanted).encoded(),
           let packet = try? Packet.sign(type: .syncRequest, timestamp: now, recipient: peer, payload: payload, key: identity.current) {
            seen.insert(packet.id, expiresAt: now &+ Freshness.livePast, now: now)
            transmit(packet, on: link, actions: &actions)
        }
        if offer.more, offer.oldest > 0 { requestOffer(from: peer, on: link, before: offer.oldest, now: now, actions: &actions) }
    }
}
