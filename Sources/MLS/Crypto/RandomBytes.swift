/// Random bytes from a caller-supplied generator: the MLS core never reaches for randomness
/// itself. Production callers pass `SystemRandomNumberGenerator` (the kernel CSPRNG); tests pass
/// a seeded generator to replay fixed inputs.
extension RandomNumberGenerator {
    public mutating func randomBytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count + 8)
        while out.count < count {
            withUnsafeBytes(of: next().littleEndian) { out.append(contentsOf: $0) }
        }
        return Array(out.prefix(count))
    }

    /// `count` random bytes held as a `Secret` (private keys, init secrets, leaf secrets).
    public mutating func randomSecret(_ count: Int) -> Secret { Secret(randomBytes(count)) }
}
