/// A node's mesh identity over time (section 2): a new key when the mesh starts and every
/// 15 minutes, postponed while an invite it hosts or joins is open (its peer knows it by that
/// id), and the previous id still answered to for 60 s so packets already on their way arrive.
public struct MeshIdentity: Sendable {
    public static let rotationInterval: UInt64 = 15 * 60 * 1000
    public static let previousIDGrace: UInt64 = 60 * 1000

    public private(set) var current: MeshKey
    /// When `current` was made.
    public private(set) var since: UInt64
    /// The key before `current`, answered to until `previousUntil`.
    public private(set) var previous: MeshKey?
    public private(set) var previousUntil: UInt64 = 0

    public init(key: MeshKey, now: UInt64) {
        current = key
        since = now
    }

    public init<R: RandomNumberGenerator>(now: UInt64, using rng: inout R) {
        self.init(key: MeshKey.generate(using: &rng), now: now)
    }

    /// Whether the rotation is due at `now` (and not held back by an open invite).
    public func rotationDue(now: UInt64, inviteOpen: Bool) -> Bool {
        !inviteOpen && now >= since &+ Self.rotationInterval
    }

    /// Rotates if due; returns whether it did (the router then announces under the new key).
    @discardableResult
    public mutating func rotateIfDue<R: RandomNumberGenerator>(now: UInt64, inviteOpen: Bool, using rng: inout R) -> Bool {
        guard rotationDue(now: now, inviteOpen: inviteOpen) else { return false }
        rotate(to: MeshKey.generate(using: &rng), now: now)
        return true
    }

    public mutating func rotate(to key: MeshKey, now: UInt64) {
        previous = current
        previousUntil = now &+ Self.previousIDGrace
        current = key
        since = now
    }

    /// The ids this node answers to at `now`: the current one, and the previous one for 60 s.
    public func answers(to id: MeshID, now: UInt64) -> Bool {
        if id == current.id { return true }
        if let previous, now < previousUntil, id == previous.id { return true }
        return false
    }
}
