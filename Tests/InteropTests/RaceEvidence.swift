import Foundation
import Nostr
import TestSupport
@_spi(StoreAccess) import Node

/// A failing round's evidence for the race suites (issue 20): Burrow's view of the group (its
/// messages, outbox and commit intents, read from its store), and each MDK peer's epoch, name
/// and tree hash, written as one text artifact.
enum RaceEvidence {
    static func collect(label: String, home: BurrowHome, passphrase: String, group gid: String,
                        peers: [(String, MDKPeer)]) async -> String {
        var lines = ["# \(label)", ""]
        lines.append("## Burrow")
        lines.append((try? home.run(["group", "show", gid]).stdout) ?? "group show failed")
        lines.append((try? home.run(["group", "tree", gid]).stdout) ?? "group tree failed")
        if let node = try? BurrowNode.open(home: URL(fileURLWithPath: home.path), passphrase: Array(passphrase.utf8)) {
            defer { node.close() }
            let rows = (try? node.store.transaction { tx -> [String] in
                var out: [String] = []
                for group in try tx.groups.list() {
                    out.append("group state \(group.state.rawValue), nostr id \(Nostr.Hex.encode(group.nostrGroupID))")
                    for message in try tx.messages.list(mlsGroupID: group.mlsGroupID) {
                        out.append("message epoch \(message.epoch) kind \(message.kind) \(message.content.prefix(60)) event \(Nostr.Hex.encode(message.eventID).prefix(16))")
                    }
                }
                for intent in try tx.commitIntents.all() {
                    out.append("intent \(intent.intent) lost \(intent.lost) commit \(Nostr.Hex.encode(intent.commitEventID).prefix(16))")
                }
                for entry in try tx.outbox.ready() { out.append("outbox ready \(entry.purpose) \(Nostr.Hex.encode(entry.eventID).prefix(16))") }
                return out
            }) ?? ["the store did not open"]
            lines += rows
        }
        for (name, peer) in peers {
            lines.append("")
            lines.append("## \(name)")
            if let state = try? await peer.group(gid) { lines.append("epoch \(state.epoch), name \(state.name), state \(state.state)") }
            if let tree = try? await peer.ratchetTree(group: gid) { lines.append("tree hash \(tree.treeHash)") }
            if let messages = try? await peer.messages(group: gid) {
                lines.append("\(messages.count) messages; last: " + messages.suffix(5).map { "\($0.content.prefix(40))" }.joined(separator: " | "))
            }
        }
        return lines.joined(separator: "\n")
    }
}
