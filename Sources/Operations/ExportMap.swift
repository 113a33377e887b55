import Foundation
import Moments

/// A moment's small map, drawn without any network: an inline SVG of its photos' positions in
/// their bounding box (at least the place's circle), the place's circle dashed, a scale bar and
/// the place's name. No tiles: the page must work offline and copied anywhere.
enum ExportMap {
    static let width = 320.0
    static let height = 200.0
    private static let metresPerDegree = 111_195.0

    /// The SVG, or nil when there is nothing to place (no positions and no place).
    static func svg(points: [Coordinate], place: Place?, label: String?) -> String? {
        guard let origin = place?.center ?? points.first else { return nil }
        let scaleX = cos(origin.latitude * .pi / 180) * metresPerDegree
        // Metres east and north of the origin.
        func metres(_ p: Coordinate) -> (x: Double, y: Double) {
            ((p.longitude - origin.longitude) * scaleX, (p.latitude - origin.latitude) * metresPerDegree)
        }
        let plotted = points.map(metres)
        let reach = max(place?.radiusMetres ?? 0, 50)
        var minX = -reach, maxX = reach, minY = -reach, maxY = reach
        if place == nil { (minX, maxX, minY, maxY) = (0, 0, 0, 0) }
        for p in plotted {
            minX = min(minX, p.x); maxX = max(maxX, p.x); minY = min(minY, p.y); maxY = max(maxY, p.y)
        }
        // At least 100 m across, a margin around, and one scale for both axes.
        let spanX = max(maxX - minX, 100), spanY = max(maxY - minY, 100)
        let scale = min(width * 0.85 / spanX, (height - 48) * 0.85 / spanY)
        let centreX = (minX + maxX) / 2, centreY = (minY + maxY) / 2
        func screen(_ p: (x: Double, y: Double)) -> (x: Double, y: Double) {
            (width / 2 + (p.x - centreX) * scale, 24 + (height - 48) / 2 - (p.y - centreY) * scale)
        }
        var shapes: [String] = []
        if let place {
            let c = screen((0, 0))
            shapes.append(#"<circle class="area" cx="\#(f(c.x))" cy="\#(f(c.y))" r="\#(f(place.radiusMetres * scale))"/>"#)
        }
        for p in plotted {
            let s = screen(p)
            shapes.append(#"<circle class="spot" cx="\#(f(s.x))" cy="\#(f(s.y))" r="5"/>"#)
        }
        let bar = scaleBar(metresPerPixel: 1 / scale)
        shapes.append(#"<path class="scale" d="M10 \#(f(height - 10))h\#(f(bar.pixels))"/><text x="10" y="\#(f(height - 15))">\#(bar.label)</text>"#)
        let name = label.map(ExportPage.escape)
        if let name {
            shapes.append(#"<text class="name" x="10" y="18">\#(name)</text>"#)
        }
        let described = "Map of \(points.count) photo position\(points.count == 1 ? "" : "s")" + (name.map { " at " + $0 } ?? "")
        return #"<svg class="map" viewBox="0 0 \#(Int(width)) \#(Int(height))" role="img" aria-label="\#(described)"><title>\#(described)</title><rect class="land" width="100%" height="100%"/>\#(shapes.joined())</svg>"#
    }

    /// A round distance about a quarter of the map's width, and its length on the map.
    private static func scaleBar(metresPerPixel: Double) -> (pixels: Double, label: String) {
        let target = width / 4 * metresPerPixel
        let magnitude = pow(10, floor(log10(target)))
        let round = [1.0, 2, 5, 10].map { $0 * magnitude }.last { $0 <= target } ?? magnitude
        let label = round >= 1000 ? "\(f(round / 1000)) km" : "\(Int(round)) m"
        return (round / metresPerPixel, label)
    }

    private static func f(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(rounded)
    }
}
