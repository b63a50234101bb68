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

    public static func svg(_ locations: [LocationView], title: String) -> String {
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

        for (location, point) in zip(locations, points) {
            let (x, y) = px(point)
            let color = location.stale ? "#9a9a9a" : "#d0453a"
            let label = escape(location.name ?? String(location.member.prefix(8)))
            if point.r > 0 {
                out += "<circle cx=\"\(f(x))\" cy=\"\(f(y))\" r=\"\(f(point.r * scale))\" fill=\"\(color)\" fill-opacity=\"0.15\" stroke=\"\(color)\" stroke-opacity=\"0.5\"/>\n"
            }
            out += "<path d=\"M \(f(x)) \(f(y)) l -9 -22 a 10 10 0 1 1 18 0 z\" fill=\"\(color)\" stroke=\"#fff\" stroke-width=\"1.5\"/>\n"
            out += "<circle cx=\"\(f(x))\" cy=\"\(f(y - 25))\" r=\"3.5\" fill=\"#fff\"/>\n"
            out += "<text x=\"\(f(x + 14))\" y=\"\(f(y - 18))\" font-size=\"14\" fill=\"#222\">\(label)\(location.stale ? " (stale)" : "")</text>\n"
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
