/// The node's way to the relays: connection pools reused for a command (or for `run`), plain
/// events signed and published, filters fetched, and the outbox of queued group events flushed.
public final class RelayGateway: ContextualService {
    let context: NodeContext
    /// Relay connections kept for the length of a command (or of `run`).
    let pools = PoolCache()

    init(context: NodeContext) { self.context = context }

    /// How long a sync's reads wait for a relay once another has answered in full: a relay
    /// that accepts and never answers costs a sync this per read, not its timeout.
    static let stragglerGrace: Duration = .seconds(3)
}
