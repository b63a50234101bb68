import SeededRandom

/// The targets' only randomness is `SplitMix64`, seeded per input so every run of an input is the
/// same run (a crash replays exactly).
extension SplitMix64 {
    /// Seeded from the input bytes (FNV-1a), so different inputs get different draws.
    public init(seedingFrom bytes: [UInt8]) {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3 }
        self.init(seed: hash)
    }
}

/// Byte-level edits: the structure-aware target applies fuzz bytes to genuine messages as an
/// edit script, and the smoke tests mutate seeds the way libFuzzer would (flip, set, insert,
/// delete, truncate, splice).
public enum ByteEdits {
    /// Applies `script` as 4-byte operations `[op, position (2 bytes, big-endian), value]`,
    /// positions taken modulo the current length: op % 4 = 0 XOR the byte with value, 1 set it,
    /// 2 insert value before it, 3 delete `value` bytes from it (0: truncate there).
    public static func apply<S: Collection>(_ script: S, to bytes: [UInt8]) -> [UInt8] where S.Element == UInt8 {
        var out = bytes
        var ops = Array(script)[...]
        while ops.count >= 4 {
            let op = ops[ops.startIndex], value = ops[ops.startIndex + 3]
            let raw = Int(ops[ops.startIndex + 1]) << 8 | Int(ops[ops.startIndex + 2])
            ops = ops.dropFirst(4)
            if out.isEmpty {
                if op % 4 == 2 { out.append(value) }
                continue
            }
            let position = raw % out.count
            switch op % 4 {
            case 0: out[position] ^= value
            case 1: out[position] = value
            case 2: out.insert(value, at: position)
            default:
                if value == 0 {
                    out.removeSubrange(position...)
                } else {
                    out.removeSubrange(position..<min(out.count, position + Int(value)))
                }
            }
        }
        return out
    }

    /// One random mutation of `bytes` (1–4 edits), occasionally spliced with `other`.
    public static func mutate(_ bytes: [UInt8], splicing other: [UInt8] = [], using rng: inout SplitMix64) -> [UInt8] {
        var out = bytes
        for _ in 0...(Int(rng.next() % 4)) {
            let choice = rng.next() % 8
            if out.isEmpty {
                out.append(UInt8(truncatingIfNeeded: rng.next()))
                continue
            }
            let position = Int(rng.next() % UInt64(out.count))
            switch choice {
            case 0, 1: out[position] ^= UInt8(1) << UInt8(rng.next() % 8)
            case 2: out[position] = [0x00, 0x01, 0x3F, 0x40, 0x7F, 0x80, 0xBF, 0xFF][Int(rng.next() % 8)]
            case 3: out.insert(UInt8(truncatingIfNeeded: rng.next()), at: position)
            case 4: out.removeSubrange(position..<min(out.count, position + 1 + Int(rng.next() % 8)))
            case 5: out.removeSubrange(position...)
            case 6:
                // Duplicate a short run (length fields then disagree with contents).
                let end = min(out.count, position + 1 + Int(rng.next() % 16))
                out.insert(contentsOf: out[position..<end], at: position)
            default:
                guard !other.isEmpty else { out[position] = UInt8(truncatingIfNeeded: rng.next()); continue }
                let start = Int(rng.next() % UInt64(other.count))
                let end = min(other.count, start + 1 + Int(rng.next() % 64))
                out.replaceSubrange(position..<min(out.count, position + (end - start)), with: other[start..<end])
            }
        }
        return out
    }
}
