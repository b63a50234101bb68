import Store

/// The way `dm send CONTACT --via nostr|mesh` asked for, which holds for that contact's frames
/// only. The flush that follows also meets other frames in the outbox — other contacts' queued
/// messages and receipts, a handshake owed to the relays, replies to strangers — and those go
/// the default way (`auto`): forced onto the mesh, a frame would count as `sent` with no relay
/// holding it (its contact perhaps nowhere near), and a stranger's reply, which has no mesh
/// route, would fail for nothing.
struct DMRoute: Sendable {
    /// The identity key of the contact `dm send` wrote to.
    let contact: [UInt8]
    let via: DMVia

    /// The way for `frame`: `via` for the contact's frames, `auto` for every other.
    func via(for frame: StoredDMFrame) -> DMVia { frame.contact == contact ? via : .auto }
}
