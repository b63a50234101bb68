/// Draws a symbol as text: two module rows per terminal line with Unicode half blocks, so
/// modules come out roughly square (terminal cells are about twice as tall as wide) and a
/// version 13 symbol with its margin takes 73 columns and 37 lines.
///
/// A terminal can only print glyphs in its foreground colour over its background colour, so
/// which modules get glyphs decides which way round the code looks:
/// - `.darkModulesPrinted` (the default) prints the dark modules and leaves light modules and
///   the quiet zone as background. On a dark-on-light terminal (and on paper) this is a normal
///   code. On a typical dark terminal (light text on black) it shows as an inverted code, light
///   modules on dark, which phone cameras (iOS, Google Lens, ZXing-based readers) also read.
/// - `.lightModulesPrinted` prints the light modules and the quiet zone, so that on a dark
///   terminal the code is the right way round for every reader, including those that do not
///   try inverted codes; on a light terminal it is inverted.
/// - `ansiColors: true` also sets the colours with SGR escapes (black on bright white for
///   dark modules printed, bright white on black for light modules printed), so the code is
///   the right way round on any terminal that honours colours, whatever its theme. The escapes
///   take no columns. This is the choice for an interactive `burrow contact card --qr`; plain
///   text is for pipes and files.
///
/// zbar, for one, does not read inverted codes, so the tests check the text drawn on a light
/// terminal with dark modules printed and on a dark one with light modules printed.
///
/// In each character the upper half is the upper module row of the pair and the lower half the
/// lower row: `█` both printed, `▀` upper only, `▄` lower only, space neither. The symbol gets a
/// 2-module quiet zone (the standard asks for 4; terminals put a background border around it
/// anyway, and readers cope with 2), so the text is `ceil((size + 4) / 2)` lines of `size + 4`
/// columns; an odd last line has nothing printed in its lower half.
public enum TerminalRenderer {
    public enum Polarity: Sendable {
        case darkModulesPrinted
        case lightModulesPrinted
    }

    /// Width of the quiet zone, in modules, on each side.
    public static let quietZone = 2

    /// The lines, without newline characters; each has exactly `size + 4` characters
    /// (trailing spaces kept, so the block stays rectangular when the background is coloured).
    public static func lines(_ matrix: QRMatrix, polarity: Polarity = .darkModulesPrinted, ansiColors: Bool = false) -> [String] {
        let span = matrix.size + 2 * quietZone
        func printed(_ x: Int, _ y: Int) -> Bool {
            guard y < span else { return false }  // below the last row: nothing there
            let dark = matrix[x - quietZone, y - quietZone]  // light outside the symbol
            return polarity == .darkModulesPrinted ? dark : !dark
        }
        // SGR: 30 black / 97 bright white foreground, 107 bright white / 40 black background.
        let (start, end) = !ansiColors ? ("", "")
            : polarity == .darkModulesPrinted ? ("\u{1B}[30;107m", "\u{1B}[0m") : ("\u{1B}[97;40m", "\u{1B}[0m")
        return stride(from: 0, to: span, by: 2).map { top in
            start + String((0..<span).map { x -> Character in
                switch (printed(x, top), printed(x, top + 1)) {
                case (true, true): "█"
                case (true, false): "▀"
                case (false, true): "▄"
                case (false, false): " "
                }
            }) + end
        }
    }

    /// The lines joined with newlines, ending with one.
    public static func string(_ matrix: QRMatrix, polarity: Polarity = .darkModulesPrinted, ansiColors: Bool = false) -> String {
        lines(matrix, polarity: polarity, ansiColors: ansiColors).map { $0 + "\n" }.joined()
    }
}

/// One character per module, for tests and debugging: `#` dark, `.` light.
public enum ASCIIRenderer {
    public static func lines(_ matrix: QRMatrix, quietZone: Int = 0, dark: Character = "#", light: Character = ".") -> [String] {
        let range = -quietZone..<(matrix.size + quietZone)
        return range.map { y in String(range.map { x in matrix[x, y] ? dark : light }) }
    }
}
