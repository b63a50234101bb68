import Foundation
@testable import Mesh
import Nostr
import TestSupport
import XCTest

/// Shared fixtures of the mesh tests: fixed keys, a quiet receiver, signed packets.
enum MeshFixture {
    static let now: UInt64 = 1_767_225_600_000

    static func key(_ byte: UInt8) -> MeshKey {
        guard let key = try? MeshKey(seed: [UInt8](repeating: byte, count: 32)) else { preconditionFailure("seed") }
        return key
    }

    /// A router that sends nothing on its own (no announces), with one 509-byte link 1.
    static func receiver(_ byte: UInt8 = 0x42, capabilities: Capabilities = [.relay, .store, .dm]) -> MeshRouter<SplitMix64> {
        var configuration = MeshConfiguration()
        configuration.announces = false
        configuration.capabilities = capabilities
        var router = MeshRouter(identity: MeshIdentity(key: key(byte), now: now), configuration: configuration, now: now,
                                random: SplitMix64(seed: UInt64(byte)))
        router.linkUp(LinkID(1), mtu: 509, now: now)
        return router
    }

    static func dm(from sender: MeshKey = key(7), to recipient: MeshID = MeshID(0x18b0_c721_a507_1234), ttl: UInt8 = 7,
                   at timestamp: UInt64 = now, payload: [UInt8] = Array("pigeon frame".utf8)) throws -> Packet {
        try Packet.sign(type: .dm, ttl: ttl, timestamp: timestamp, recipient: recipient, payload: payload, key: sender)
    }

    static func vectors(_ file: String) throws -> [JSONValue] {
        let root = try JSONValue.parse([UInt8](try Fixtures.data("mesh/\(file)")))
        return root["cases"]?.arrayValue ?? []
    }
}

/// A router's observable state, to assert that a refused frame changed nothing.
struct RouterSnapshot: Equatable {
    let seen: Int, seenEvents: Int, pending: Int, assemblies: Int, assemblyBytes: Int, store: Int, senders: Int
    let delivered: Int, forwarded: Int, framesOut: Int
    let links: [LinkStatus]

    init(_ router: MeshRouter<SplitMix64>) {
        let f = router.footprint
        seen = f.seen; seenEvents = f.seenEvents; pending = f.pending; assemblies = f.assemblies
        assemblyBytes = f.assemblyBytes; store = f.store; senders = f.senders
        delivered = router.counters.delivered; forwarded = router.counters.forwarded; framesOut = router.counters.framesOut
        links = router.linkStatus
    }
}
