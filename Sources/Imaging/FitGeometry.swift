/// Sizes and crop windows of the two fits, in whole pixels. Pure functions of the sizes.
enum FitGeometry {
    /// `contain`: the largest size with the source's aspect inside the box, never larger than the source.
    static func containSize(sourceWidth: Int, sourceHeight: Int, boxWidth: Int, boxHeight: Int) -> (width: Int, height: Int) {
        let scale = min(1, Double(boxWidth) / Double(sourceWidth), Double(boxHeight) / Double(sourceHeight))
        if scale >= 1 { return (sourceWidth, sourceHeight) }
        let width = min(boxWidth, max(1, Int((Double(sourceWidth) * scale).rounded())))
        let height = min(boxHeight, max(1, Int((Double(sourceHeight) * scale).rounded())))
        return (width, height)
    }

    /// `cover`: the largest window of the box's aspect that the source holds.
    static func coverWindow(sourceWidth: Int, sourceHeight: Int, boxWidth: Int, boxHeight: Int) -> (width: Int, height: Int) {
        if sourceWidth * boxHeight >= sourceHeight * boxWidth {
            // The source is wider than the box: full height, width cut.
            let width = Int((Double(sourceHeight) * Double(boxWidth) / Double(boxHeight)).rounded())
            return (min(sourceWidth, max(1, width)), sourceHeight)
        }
        let height = Int((Double(sourceWidth) * Double(boxHeight) / Double(boxWidth)).rounded())
        return (sourceWidth, min(sourceHeight, max(1, height)))
    }

    /// `cover`'s output for a window: the box itself, or, when the window is smaller than the
    /// box (a small source), the window's own size: a cover is never enlarged.
    static func coverOutput(windowWidth: Int, windowHeight: Int, boxWidth: Int, boxHeight: Int) -> (width: Int, height: Int) {
        if windowWidth >= boxWidth && windowHeight >= boxHeight { return (boxWidth, boxHeight) }
        // Same aspect as the box (up to rounding), so both sides are below the box.
        return (min(windowWidth, boxWidth), min(windowHeight, boxHeight))
    }

    /// A window of the given size centred on a point (in source pixels), moved inside the source.
    static func window(width: Int, height: Int, centredOn point: (x: Double, y: Double), sourceWidth: Int, sourceHeight: Int) -> CropRect {
        let x = Int((point.x - Double(width) / 2).rounded())
        let y = Int((point.y - Double(height) / 2).rounded())
        return CropRect(
            x: min(max(x, 0), sourceWidth - width), y: min(max(y, 0), sourceHeight - height),
            width: width, height: height)
    }

    /// Whether a rectangle is non-empty and lies inside a source of the given size.
    static func isInside(_ rect: CropRect, sourceWidth: Int, sourceHeight: Int) -> Bool {
        rect.width >= 1 && rect.height >= 1 && rect.x >= 0 && rect.y >= 0
            && rect.x + rect.width <= sourceWidth && rect.y + rect.height <= sourceHeight
    }

    /// Whether a rectangle has the box's aspect, within the one pixel that rounding can cost.
    static func hasAspect(_ rect: CropRect, boxWidth: Int, boxHeight: Int) -> Bool {
        // |w/h - W/H| * max(h, w) <= 1 pixel, without division.
        let difference = abs(rect.width * boxHeight - rect.height * boxWidth)
        return difference <= max(boxWidth, boxHeight)
    }
}
