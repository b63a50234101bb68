import Crypto
import Feed
import MLS
import Mesh
import Nostr

/// sync.json's `session` cases: two nodes driven in rounds (feed.md 8.5) over a budgeted link,
/// every packet checked against the transcript, then each node's feeds.
extension FeedConformance {
    static func typeName(_ type: SyncFrameType) -> String {
        switch type {
        case .request: return "feed-request"
        case .offer: return "feed-offer"
        case .chunk: return "feed-chunk"
        case .ack: return "feed-ack"
        case .range: return "feed-range"
        }
    }

    static func sessionNode(_ entry: JSONValue?, name: String, window: Int) throws -> (chains: FeedChains, feedID: [UInt8]) {
        let identity = try Curve25519.Signing.PrivateKey(rawRepresentation: hex(entry, "identity_seed"))
        let identityKey = Array(identity.publicKey.rawRepresentation)
        let follows = try (entry?["follows"]?.arrayValue ?? []).map { item -> [UInt8] in
            guard let text = item.stringValue, let key = try? Hex.decode(text, length: 32) else { throw CaseFailure("\(name) follows") }
            return key
        }
        let chains = FeedChains(ownIdentityKey: identityKey, follows: follows, maximumPerFeed: window)
        for (index, item) in (entry?["own"]?.arrayValue ?? []).enumerated() {
            guard let text = item.stringValue, case .success = chains.appendOwn(Array(text.utf8)).result else {
                throw CaseFailure("\(name) own \(index) not accepted")
            }
        }
        for member in entry?["stored"]?.objectValue ?? [] {
            let feedID = try b64(member.key)
            for item in member.value.arrayValue ?? [] {
                guard let text = item.stringValue, chains.store(Array(text.utf8), feedID: feedID) != nil else {
                    throw CaseFailure("\(name) stored for an unfollowed feed")
                }
            }
        }
        try checkFeeds(chains, entry?["initial"], label: "\(name) initial")
        return (chains, FeedKeys.feedID(identityKey: identityKey))
    }

    static func checkFeeds(_ chains: FeedChains, _ expected: JSONValue?, label: String) throws {
        for member in expected?.objectValue ?? [] {
            let feedID = try b64(member.key)
            guard let chain = chains.followed[feedID] else { throw CaseFailure("\(label): \(member.key) not followed") }
            let accepted = member.value["accepted"]?.arrayValue?.compactMap(\.integerValue)
            try check("\(label) \(member.key.prefix(6)) accepted", chain.range.map { [Int64($0.lowerBound), Int64($0.upperBound)] }, accepted)
            try check("\(label) \(member.key.prefix(6)) held", chain.held.map { Int64($0) },
                      member.value["held"]?.arrayValue?.compactMap(\.integerValue) ?? [])
            try check("\(label) \(member.key.prefix(6)) head", chain.head.map { Base64URL.encode($0) }, member.value["head"]?.stringValue)
        }
    }

    static func chunkResult(_ received: FeedChunkReceiver.Received) -> String {
        var parts: [String]
        switch received.result {
        case .success(let status): parts = ["status=\(status.rawValue)"]
        case .failure(let error): parts = ["error=\(error.rawValue)"]
        }
        for release in received.released {
            switch release.result {
            case .success(let status): parts.append("\(release.sequence):\(status.rawValue)")
            case .failure(let error): parts.append("\(release.sequence):\(error.rawValue)")
            }
        }
        return parts.joined(separator: " ")
    }

    static func expectedResult(_ value: JSONValue) throws -> String {
        var parts: [String]
        if let status = value["status"]?.stringValue { parts = ["status=\(status)"] } else { parts = ["error=\(try string(value, "error"))"] }
        for item in value["released"]?.arrayValue ?? [] {
            guard let seq = item["seq"]?.integerValue else { throw CaseFailure("released seq") }
            parts.append("\(seq):\(item["status"]?.stringValue ?? item["error"]?.stringValue ?? "?")")
        }
        return parts.joined(separator: " ")
    }

    static func session(_ entry: JSONValue) throws {
        guard let mtuValue = entry["mtu"]?.integerValue, let mtu = Int(exactly: mtuValue),
              let windowValue = entry["max_per_feed"]?.integerValue, let window = Int(exactly: windowValue) else { throw CaseFailure("mtu") }
        let budget = entry["budget"]?.integerValue.flatMap { Int(exactly: $0) }
        let pairKey = try hex(entry, "pair_key")
        let meshA = try hex(entry, "mesh_key_a"), meshB = try hex(entry, "mesh_key_b")
        let a = try sessionNode(entry["nodes"]?["a"], name: "a", window: window)
        let b = try sessionNode(entry["nodes"]?["b"], name: "b", window: window)
        var run = FeedSessionRun(FeedSession(link: linkPair(pairKey: pairKey, own: meshA, peer: meshB), peerFeedID: b.feedID),
                                 FeedSession(link: linkPair(pairKey: pairKey, own: meshB, peer: meshA), peerFeedID: a.feedID),
                                 mtu: mtu, budget: budget)
        try run.run((a.chains, b.chains))
        let expected = entry["expect"]?["transcript"]?.arrayValue ?? []
        try check("transcript length", run.transcript.count, expected.count)
        for (index, (sent, want)) in zip(run.transcript, expected).enumerated() {
            let label = "packet \(index) (round \(sent.round))"
            try check("\(label) round", Int64(sent.round), want["round"]?.integerValue ?? -1)
            try check("\(label) from", sent.side == 0 ? "a" : "b", try string(want, "from"))
            try check("\(label) type", typeName(sent.packet.type), try string(want, "type"))
            try check("\(label) frames", sent.packet.frames, try hex(want, "frames"))
            try check("\(label) payload", sent.packet.payload, try hex(want, "payload"))
            try check("\(label) link frames", Int64(sent.linkFrames), want["link_frames"]?.integerValue ?? -1)
            try check("\(label) delivered", sent.delivered, want["delivered"]?.boolValue ?? !sent.delivered)
            switch sent.delivery {
            case .chunk(let received)?:
                guard let result = want["result"] else { throw CaseFailure("\(label): a result the transcript lacks") }
                try check("\(label) result", chunkResult(received), try expectedResult(result))
            case .dropped(let error)?: throw CaseFailure("\(label) dropped: \(error.rawValue)")
            case .frames?, nil:
                guard want["result"] == nil else { throw CaseFailure("\(label): no result") }
            }
        }
        try checkFeeds(a.chains, entry["expect"]?["final"]?["a"], label: "a final")
        try checkFeeds(b.chains, entry["expect"]?["final"]?["b"], label: "b final")
    }
}

extension FeedConformance {
    /// sync.json's `mesh_packet`: a sealed feed payload as a signed mesh packet and its frames.
    static func meshPacket(_ entry: JSONValue) throws {
        let expect = entry["expect"]
        let key = try MeshKey(seed: hex(entry, "mesh_seed"))
        guard let raw = entry["type"]?.integerValue, let byte = UInt8(exactly: raw), let type = PacketType(rawValue: byte), type.isFeed,
              let stamp = entry["timestamp"]?.integerValue, let timestamp = UInt64(exactly: stamp),
              let mtuValue = entry["mtu"]?.integerValue, let mtu = Int(exactly: mtuValue),
              let recipient = MeshID(bytes: try hex(entry, "recipient")) else { throw CaseFailure("type, timestamp, mtu or recipient") }
        let payload = try hex(entry, "payload")
        let packet = try Packet.sign(type: type, timestamp: timestamp, recipient: recipient, payload: payload, key: key)
        try check("packet", packet.encoded, try hex(expect, "packet"))
        try check("packet id", packet.id.bytes, try hex(expect, "packet_id"))
        let frames = FragmentFrame.frames(for: packet, mtu: mtu)
        try check("frame count", Int64(frames.count), expect?["frame_count"]?.integerValue ?? -1)
        try check("frames", frames.map(Hex.encode), (expect?["frames"]?.arrayValue ?? []).compactMap(\.stringValue))
        try check("link frames", frames.count, FeedSession.linkFrames(payloadCount: payload.count, mtu: mtu))
        // A node with feeds on takes it; one without refuses the type, as mesh.md 3.1 says.
        let decoded = try UnverifiedPacket.decode(packet.encoded, feeds: true).verified()
        try check("decoded", decoded.payload, payload)
        do {
            _ = try UnverifiedPacket.decode(packet.encoded)
            throw CaseFailure("a node without feeds took a feed packet")
        } catch let error as MeshError {
            try check("without feeds", error, MeshError.unknownType)
        }
    }
}
