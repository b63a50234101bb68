import Foundation

/// An SVG map of members' last locations: a pin and name per member, a circle for the
/// horizontal accuracy, a scale bar, stale positions greyed. No tiles (nothing is fetched):
/// a local equirectangular projection around the members, which is exact enough at family
/// scale (a few kilometres).
public enum LocationMap {
    static let width = 800.0
    static let height = 600.0
    static let margin = 70.0
    static let metersPerDegree = 111_320.0

    /// A label's box in pixels, for keeping labels apart.
    struct Box {
        var x, y, width, height: Double

        func overlaps(_ other: Box) -> Bool {
            x < other.x + other.width && other.x < x + width && y < other.y + other.height && other.y < y + height
        }
    }

    /// Rough text widths (sans-serif): enough to keep boxes apart without a font.
    static func textWidth(_ text: String, size: Double) -> Double { Double(text.count) * size * 0.6 }

    /// The map. `time` writes a location's time for its pin (the CLI passes local time).
    public static func svg(_ locations: [LocationView], title: String, time: (Int64) -> String = { String($0) }) -> String {
        var out = """
        <svg xmlns="http://www.w3.org/2000/svg" width="\(Int(width))" height="\(Int(height))" viewBox="0 0 \(Int(width)) \(Int(height))" font-family="sans-serif">
        <rect width="100%" height="100%" fill="#f4f1ea"/>
        <text x="20" y="32" font-size="20" fill="#333">\(escape(title))</text>

        """
        guard !locations.isEmpty else {
            out += "<text x=\"20\" y=\"70\" font-size=\"14\" fill=\"#666\">no locations shared yet</text>\n</svg>\n"
            return out
        }
        let lat0 = locations.map(\.payload.latitude).reduce(0, +) / Double(locations.count)
        let lon0 = locations.map(\.payload.longitude).reduce(0, +) / Double(locations.count)
        let cosLat = max(0.01, cos(lat0 * .pi / 180))
        // Metres east and north of the centre, including each accuracy circle's extent.
        let points = locations.map { l -> (x: Double, y: Double, r: Double) in
            ((l.payload.longitude - lon0) * metersPerDegree * cosLat, (l.payload.latitude - lat0) * metersPerDegree, max(0, l.payload.accuracy))
        }
        let spanX = points.map { abs($0.x) + $0.r }.max() ?? 0
        let spanY = points.map { abs($0.y) + $0.r }.max() ?? 0
        let scale = min((width - 2 * margin) / 2 / max(spanX, 50), (height - 2 * margin) / 2 / max(spanY, 50))
        func px(_ p: (x: Double, y: Double, r: Double)) -> (Double, Double) { (width / 2 + p.x * scale, height / 2 - p.y * scale) }

        // Circles and pins first, labels over them.
        var pinBoxes: [Box] = []
        for (location, point) in zip(locations, points) {
            let (x, y) = px(point)
            let color = location.stale ? "#9a9a9a" : "#d0453a"
            if point.r > 0 {
                out += "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"\(f(point.r * scale))\" fill=\"\(color)\" fill-opacity=\"0.15\" stroke=\"\(color)\" stroke-opacity=\"0.5\"/>\n"
            }
            out += "<path d=\"M \(f(x)) \(f(y)) l -9 -22 a 10 10 0 1 1 18 0 z\" fill=\"\(color)\" stroke=\"#fff\" stroke-width=\"1.5\"/>\n"
            out += "<circle cx=\"\(f(x))\" cy=\"\(f(y - 25))\" r=\"3.5\" fill=\"#fff\"/>\n"
            pinBoxes.append(Box(x: x - 10, y: y - 36, width: 20, height: 36))
        }
        // Each label (name, and its time below) goes beside its pin where it overlaps no
        // other label or pin: right, left, above, below, else further down with a leader line.
        var placed: [Box] = []
        let order = locations.indices.sorted { px(points[$0]).1 < px(points[$1]).1 }
        for index in order {
            let location = locations[index]
            let (x, y) = px(points[index])
            let name = (location.name ?? String(location.member.prefix(8))) + (location.stale ? " (stale)" : "")
            let when = time(location.payload.timestamp)
            let w = max(textWidth(name, size: 14), textWidth(when, size: 11)) + 4
            let h = 32.0
            let candidates = [Box(x: x + 14, y: y - 34, width: w, height: h), Box(x: x - 14 - w, y: y - 34, width: w, height: h),
                              Box(x: x - w / 2, y: y - 40 - h, width: w, height: h), Box(x: x - w / 2, y: y + 6, width: w, height: h)]
            let others = pinBoxes.enumerated().filter { $0.offset != index }.map(\.element) + placed
            func free(_ box: Box) -> Bool {
                box.x >= 0 && box.x + box.width <= width && box.y >= 40 && box.y + box.height <= height - 40
                    && !others.contains { $0.overlaps(box) }
            }
            var box = candidates.first(where: free)
            var leader = false
            if box == nil {
                leader = true
                var step = 1.0
                while box == nil, step < 40 {
                    for base in candidates.prefix(2) {
                        let moved = Box(x: base.x, y: base.y + step * 18, width: w, height: h)
                        if free(moved) { box = moved; break }
                    }
                    step += 1
                }
            }
            let label = box ?? candidates[0]
            placed.append(label)
            if leader {
                let anchorX = label.x > x ? label.x : label.x + label.width
                out += "<line x1=\"\(f(x))\" y1=\"\(f(y - 25))\" x2=\"\(f(anchorX))\" y2=\"\(f(label.y + 12))\" stroke=\"#555\" stroke-width=\"1\"/>\n"
            }
            out += "<g class=\"label\"><text x=\"\(f(label.x + 2))\" y=\"\(f(label.y + 14))\" font-size=\"14\" fill=\"#222\">\(escape(name))</text>"
            out += "<text x=\"\(f(label.x + 2))\" y=\"\(f(label.y + 28))\" font-size=\"11\" fill=\"#666\">\(escape(when))</text></g>\n"
        }

        // Scale bar: the largest round length that fits in a fifth of the width.
        let maxMeters = (width / 5) / scale
        let steps: [Double] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000, 1_000_000]
        let meters = steps.last { $0 <= maxMeters } ?? 1
        let barPixels = meters * scale
        let label = meters >= 1000 ? "\(f(meters / 1000)) km" : "\(Int(meters)) m"
        out += """
        <g transform="translate(20 \(Int(height - 30)))">
        <rect x="0" y="0" width="\(f(barPixels))" height="6" fill="#333"/>
        <text x="\(f(barPixels + 8))" y="7" font-size="13" fill="#333">\(label)</text>
        </g>
        </svg>

        """
        return out
    }

    static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;").replacingOccurrences(of: "\"", with: "&quot;")
    }
}
