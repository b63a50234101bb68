/// A symbol as SVG: one path of unit squares on a white field with the quiet zone the
/// standard asks for (four modules), black on white whatever the page's colours, so any camera
/// reads it. `crispEdges` keeps scaled modules from blurring into each other.
public enum SVGRenderer {
    public static let quietZone = 4

    public static func svg(_ matrix: QRMatrix) -> String {
        let side = matrix.size + 2 * quietZone
        var path = ""
        for y in 0..<matrix.size {
            var x = 0
            while x < matrix.size {
                guard matrix[x, y] else {
                    x += 1
                    continue
                }
                // One horizontal run per path segment keeps the text short.
                var run = 1
                while x + run < matrix.size, matrix[x + run, y] { run += 1 }
                path += "M\(x + quietZone) \(y + quietZone)h\(run)v1h-\(run)z"
                x += run
            }
        }
        return """
        <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" shape-rendering="crispEdges">\
        <rect width="\(side)" height="\(side)" fill="#fff"/><path d="\(path)" fill="#000"/></svg>
        """
    }
}
