import CResample

/// Places crop windows where a picture's interest is densest, in the spirit of libvips'
/// `attention` smart crop: interest per pixel (edges, saturation, skin) on a small copy,
/// summed over every window position through an integral image; the best sum wins.
struct AttentionCrop {
    /// Width and height of the scored copy.
    let mapWidth: Int
    let mapHeight: Int
    /// Display pixels (full resolution) per scored pixel, horizontally and vertically.
    let cellWidth: Double
    let cellHeight: Double
    /// Summed-area table of the scores, (mapWidth + 1) × (mapHeight + 1).
    let integral: [Double]

    /// Scores `analysis`, a copy of the displayed picture whose pixels each cover
    /// cellWidth × cellHeight display pixels (`luma`: its luma, when the caller has it already).
    init(analysis: Raster, luma: [Float]? = nil, cellWidth: Double, cellHeight: Double) {
        let scores = PictureAnalysis.saliency(of: analysis, luma: luma)
        let width = analysis.width, height = analysis.height
        let table = [Double](unsafeUninitializedCapacity: (width + 1) * (height + 1)) { table, initialised in
            dr_summed_area(scores, Int32(width), Int32(height), table.baseAddress)
            initialised = (width + 1) * (height + 1)
        }
        self.mapWidth = width
        self.mapHeight = height
        self.cellWidth = cellWidth
        self.cellHeight = cellHeight
        self.integral = table
    }

    /// The window of width × height display pixels (inside a display of displayWidth ×
    /// displayHeight) whose interest is highest; among equals, the one nearest the centre.
    func bestWindow(width: Int, height: Int, displayWidth: Int, displayHeight: Int) -> CropRect {
        let windowWidth = min(mapWidth, max(1, Int((Double(width) / cellWidth).rounded())))
        let windowHeight = min(mapHeight, max(1, Int((Double(height) / cellHeight).rounded())))
        let stride = mapWidth + 1
        var best = -Double.infinity
        var bestDistance = Double.infinity
        var bestX = 0, bestY = 0
        let centreX = Double(mapWidth - windowWidth) / 2, centreY = Double(mapHeight - windowHeight) / 2
        for y in 0...(mapHeight - windowHeight) {
            for x in 0...(mapWidth - windowWidth) {
                let sum = integral[(y + windowHeight) * stride + x + windowWidth] - integral[y * stride + x + windowWidth]
                    - integral[(y + windowHeight) * stride + x] + integral[y * stride + x]
                let distance = (Double(x) - centreX) * (Double(x) - centreX) + (Double(y) - centreY) * (Double(y) - centreY)
                // A relative tolerance keeps float noise from beating the centre preference.
                if sum > best * (1 + 1e-9) + 1e-9 || (abs(sum - best) <= 1e-9 * max(1, abs(best)) && distance < bestDistance) {
                    best = sum
                    bestDistance = distance
                    bestX = x
                    bestY = y
                }
            }
        }
        let centre = (
            x: (Double(bestX) + Double(windowWidth) / 2) * cellWidth,
            y: (Double(bestY) + Double(windowHeight) / 2) * cellHeight)
        return FitGeometry.window(width: width, height: height, centredOn: centre, sourceWidth: displayWidth, sourceHeight: displayHeight)
    }
}
