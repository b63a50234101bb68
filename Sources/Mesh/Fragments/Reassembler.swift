/// The fragment assemblies of one link (section 5). Only the link's peer fills its slots, so
/// the limits are per link: at most 4 assemblies and 128 KiB of chunks, each living 30 s from
/// its first fragment and 10 s from its last progress. A total is checked against the original
/// type's maximum before anything is buffered, so a lying header cannot make us hold memory.
public struct Reassembler: Sendable {
    public static let maxAssemblies = 4
    public static let maxBufferedBytes = 128 * 1024
    public static let lifetime: UInt64 = 30_000
    public static let idleLifetime: UInt64 = 10_000
    /// The chunk length assumed until a non-final chunk shows the real one.
    static let minimumChunk = 5

    struct Assembly: Sendable {
        let total: UInt16
        let originalType: PacketType
        let firstAt: UInt64
        var lastAt: UInt64
        var lastSequence: UInt64
        /// The non-final chunk length, once a non-final chunk arrived.
        var chunkLength: Int?
        var finalLength: Int?
        var chunks: [UInt16: [UInt8]] = [:]
        var bytes = 0
    }

    private(set) var assemblies: [UInt64: Assembly] = [:]
    private var sequence: UInt64 = 0

    public init() {}

    public var count: Int { assemblies.count }
    public var bufferedBytes: Int { assemblies.values.reduce(0) { $0 + $1.bytes } }

    /// Drops assemblies past their lifetimes.
    public mutating func expire(now: UInt64) {
        assemblies = assemblies.filter { _, a in
            now < a.firstAt &+ Self.lifetime && now < a.lastAt &+ Self.idleLifetime
        }
    }

    /// Adds one fragment. Returns the completed packet's bytes, decoded (section 4 step 3) and
    /// matched to the fragment header, or `nil` while incomplete. Throws the section 5 refusal;
    /// an assembly found inconsistent is dropped.
    public mutating func add(_ fragment: FragmentFrame, now: UInt64, feeds: Bool = false) throws(MeshError) -> UnverifiedPacket? {
        expire(now: now)
        sequence &+= 1
        let key = fragment.fragmentID
        let length = fragment.chunk.count
        var assembly: Assembly
        if let existing = assemblies[key] {
            assembly = existing
            guard assembly.total == fragment.total, assembly.originalType == fragment.originalType else {
                assemblies[key] = nil
                throw .badFragment
            }
        } else {
            assembly = Assembly(total: fragment.total, originalType: fragment.originalType, firstAt: now, lastAt: now,
                                lastSequence: sequence)
        }
        if let previous = assembly.chunks[fragment.index] {
            // A repeat must repeat its bytes; then it changes nothing.
            guard previous == fragment.chunk else {
                assemblies[key] = nil
                throw .badFragment
            }
            return nil
        }
        if fragment.isFinal {
            if let c = assembly.chunkLength, length > c {
                assemblies[key] = nil
                throw .badFragment
            }
            assembly.finalLength = length
        } else {
            if let c = assembly.chunkLength, c != length {
                assemblies[key] = nil
                throw .badFragment
            }
            guard length >= Self.minimumChunk, length >= (assembly.finalLength ?? 0) else {
                assemblies[key] = nil
                throw .badFragment
            }
            assembly.chunkLength = length
        }
        let c = assembly.chunkLength ?? Self.minimumChunk
        let smallest = (Int(assembly.total) - 1) * c + 1
        // Section 5 bounds every type by 126 + its payload cap (the larger, directed overhead).
        guard smallest <= 126 + assembly.originalType.maxPayload else {
            assemblies[key] = nil
            throw .reassemblyTooLarge
        }

        assembly.chunks[fragment.index] = fragment.chunk
        assembly.bytes += length
        assembly.lastAt = now
        assembly.lastSequence = sequence
        assemblies[key] = assembly
        makeRoom(keeping: key)

        guard assembly.chunks.count == Int(assembly.total) else { return nil }
        assemblies[key] = nil
        var bytes: [UInt8] = []
        bytes.reserveCapacity(assembly.bytes)
        for i in 0..<assembly.total {
            guard let chunk = assembly.chunks[i] else { return nil }
            bytes += chunk
        }
        let packet = try UnverifiedPacket.decode(bytes, feeds: feeds)
        guard packet.type == fragment.originalType, packet.id.id8.value == key else { throw .reassemblyMismatch }
        return packet
    }

    /// Evicts the assemblies whose latest fragment is oldest until the link is within its
    /// limits (never the one just added to, unless it alone breaks them).
    private mutating func makeRoom(keeping key: UInt64) {
        while assemblies.count > Self.maxAssemblies || bufferedBytes > Self.maxBufferedBytes {
            let victims = assemblies.filter { $0.key != key }
            guard let stalest = victims.min(by: { ($0.value.lastAt, $0.value.lastSequence) < ($1.value.lastAt, $1.value.lastSequence) })
            else {
                assemblies[key] = nil
                return
            }
            assemblies[stalest.key] = nil
        }
    }
}
