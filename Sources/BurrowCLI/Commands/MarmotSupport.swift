import ArgumentParser
import Foundation
import Node
import Nostr

extension NodeOpener {
    /// Opens the node, runs `body`, and closes relay connections and the store whatever happens.
    static func with<T>(_ globals: GlobalOptions, _ body: (BurrowNode) async throws -> T) async throws -> T {
        if let node = ServingNode.current { return try await body(node) }
        let node = try open(globals)
        do {
            let result = try await body(node)
            await node.gateway.closeConnections()
            node.close()
            return result
        } catch {
            await node.gateway.closeConnections()
            node.close()
            throw error
        }
    }
}

/// The node `burrow run` owns, while it serves a forwarded command.
enum ServingNode {
    @TaskLocal static var current: BurrowNode?
}

extension KeyArgument {
    static func publicKeys(_ texts: [String]) throws -> [PublicKey] { try texts.map(publicKey) }
}

/// `--sync` for read-only commands: sync first (Docs/cli.md Freshness).
struct SyncFlag: ParsableArguments {
    @Flag(name: .customLong("sync"), help: "Sync with the relays first.") var sync = false

    /// Syncs when asked; what the sync refused, for the commands that show it.
    @discardableResult
    func apply(_ node: BurrowNode, _ globals: GlobalOptions) async throws -> [SyncIssue] {
        guard sync else { return [] }
        return try await node.sync(timeout: globals.timeoutDuration).errors
    }
}
