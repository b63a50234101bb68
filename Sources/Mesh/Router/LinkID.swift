/// A link of this node: one BLE connection, the notify link of its subscribed centrals, or one
/// UDP peer port. Chosen by the transport; the router only compares them.
public struct LinkID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let value: UInt32

    public init(_ value: UInt32) { self.value = value }

    public static func < (lhs: LinkID, rhs: LinkID) -> Bool { lhs.value < rhs.value }

    public var description: String { "link\(value)" }
}
