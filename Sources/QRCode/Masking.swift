/// One of the eight data mask patterns (7.8.2, table 10). A mask inverts the data modules where
/// its condition holds, breaking up large areas and finder-like shapes that would confuse a
/// reader; the encoder tries all eight and keeps the one with the lowest `Penalty`.
public struct QRMask: Sendable, Hashable, CustomStringConvertible {
    /// The mask pattern reference, 0–7, as written into the format information.
    public let pattern: Int

    public init(_ pattern: Int) throws(QRError) {
        guard (0...7).contains(pattern) else { throw QRError.invalidMask(pattern) }
        self.pattern = pattern
    }

    init(unchecked pattern: Int) { self.pattern = pattern }

    public static var all: [QRMask] { (0...7).map(QRMask.init(unchecked:)) }

    public var description: String { "mask \(pattern)" }

    /// Whether the module at row i, column j is inverted (table 10's conditions, i = row).
    public func inverts(row i: Int, column j: Int) -> Bool {
        switch pattern {
        case 0: (i + j) % 2 == 0
        case 1: i % 2 == 0
        case 2: j % 3 == 0
        case 3: (i + j) % 3 == 0
        case 4: (i / 2 + j / 3) % 2 == 0
        case 5: (i * j) % 2 + (i * j) % 3 == 0
        case 6: ((i * j) % 2 + (i * j) % 3) % 2 == 0
        default: ((i + j) % 2 + (i * j) % 3) % 2 == 0
        }
    }
}

/// The penalty score of a finished symbol (7.8.3, table 11); lower is better.
///
/// Rules, with N1 = 3, N2 = 3, N3 = 40, N4 = 10:
/// 1. each run of 5 + i same-coloured modules in a row or column: N1 + i;
/// 2. each 2 × 2 block of one colour (overlapping blocks all count, which is the same as
///    N2 × (m − 1) × (n − 1) for an m × n block): N2;
/// 3. each dark-light-dark-dark-dark-light-dark (1:1:3:1:1) run in a row or column with a
///    4-module light area before or after it: N3. Modules outside the symbol count as light,
///    since the quiet zone is; a run with light areas on both sides counts once;
/// 4. the share of dark modules, k whole 5 % steps away from 50 %: N4 × k.
public enum Penalty {
    /// The score of the symbol whose module at column x, row y is `isDark(x, y)`.
    public static func score(size: Int, isDark: (_ x: Int, _ y: Int) -> Bool) -> Int {
        var grid = [Bool](repeating: false, count: size * size)
        for y in 0..<size {
            for x in 0..<size { grid[y * size + x] = isDark(x, y) }
        }
        return score(grid: grid, size: size)
    }

    public static func score(_ matrix: QRMatrix) -> Int {
        score(grid: matrix.modules, size: matrix.size)
    }

    /// The score of a row-major grid, true = dark.
    static func score(grid: [Bool], size: Int) -> Int {
        var total = 0
        let darkCount = grid.lazy.filter { $0 }.count
        var line = [Bool](repeating: false, count: size)
        for index in 0..<size {
            for k in 0..<size { line[k] = grid[index * size + k] }  // row `index`
            total += lineScore(line)
            for k in 0..<size { line[k] = grid[k * size + index] }  // column `index`
            total += lineScore(line)
        }
        // Rule 2.
        if size >= 2 {
            for y in 0..<(size - 1) {
                for x in 0..<(size - 1) {
                    let colour = grid[y * size + x]
                    if grid[y * size + x + 1] == colour && grid[(y + 1) * size + x] == colour
                        && grid[(y + 1) * size + x + 1] == colour {
                        total += 3
                    }
                }
            }
        }
        // Rule 4: k = ⌊|100 · dark / all − 50| / 5⌋ = ⌊|20 · dark − 10 · all| / all⌋.
        let all = size * size
        if all > 0 { total += 10 * (abs(20 * darkCount - 10 * all) / all) }
        return total
    }

    /// Rules 1 and 3 along one row or column.
    static func lineScore(_ line: [Bool]) -> Int {
        var total = 0
        let count = line.count
        // Rule 1.
        var runStart = 0
        for k in 1...count {
            if k == count || line[k] != line[runStart] {
                let run = k - runStart
                if run >= 5 { total += 3 + (run - 5) }
                runStart = k
            }
        }
        // Rule 3.
        func light(_ k: Int) -> Bool { k < 0 || k >= count || !line[k] }
        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        if count >= 7 {
            for start in 0...(count - 7) {
                guard (0..<7).allSatisfy({ line[start + $0] == finderLike[$0] }) else { continue }
                let lightBefore = (1...4).allSatisfy { light(start - $0) }
                let lightAfter = (0..<4).allSatisfy { light(start + 7 + $0) }
                if lightBefore || lightAfter { total += 40 }
            }
        }
        return total
    }
}
