#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One render: plans the variants from the header, decodes once, makes the `contain` variants,
/// the analysis copy (from one of them when one is large enough) and the crops, then the `cover` variants.
struct Renderer {
    /// The analysis copy (statistics, placeholder, attention map) is box-reduced by an integer
    /// factor until its long edge is at most this, from the smallest `contain` variant whose long
    /// edge is at least this (made before it; with the default recipes the 1024-pixel preview,
    /// halved), else from the decoded picture (`analysisSource(among:)`).
    static let analysisMaxEdge = 512
    /// A variant is derived from a larger variant (instead of the decoded raster) only when that
    /// variant has at least this many pixels per output pixel along each axis. At 2× the
    /// second Lanczos pass costs no measurable sharpness (see the quality tests).
    static let derivationFactor = 2.0
    /// Encoder trade-offs, measured with libjpeg-turbo 2.1.5 on 2000×1500 photo rasters at quality
    /// 85: Huffman optimisation takes 1.8–2× the encode time (9 → 18 ms) for files 5–8% smaller;
    /// progressive takes 4.6× (9 → 43 ms) for 8% smaller. Speed wins: plain baseline.
    static let encodeOptimized = false
    static let encodeProgressive = false
    /// libjpeg-turbo's exact IDCT and fancy upsampling (fast mode is not worth its artefacts).
    static let fastDecode = false

    let options: RenderOptions

    /// A recipe with its output size and (for `cover`) its window in display coordinates.
    struct Plan {
        let recipe: VariantRecipe
        let width: Int
        let height: Int
        var crop: CropRect?
        var cropSource: CropSource
        /// The window's size, known before its position.
        let windowWidth: Int
        let windowHeight: Int
    }

    /// A raster variants can be resampled from, and its pixels per display pixel; the decoded
    /// raster may be read flipped (`mirrorX`, `mirrorY`: the orientation's flips, folded into the
    /// resampler's reads) and turned a quarter (`transposed`: the upright picture is
    /// `raster.transposed()`, which the resampler reads in place); the variants made are upright.
    struct Source {
        let raster: Raster
        let ratioX: Double
        let ratioY: Double
        var mirrorX = false
        var mirrorY = false
        var transposed = false

        /// This source with its quarter turn made (a copy), for a reader that needs it upright.
        func upright() throws -> Source {
            guard transposed else { return self }
            return Source(raster: try raster.transposed(), ratioX: ratioX, ratioY: ratioY, mirrorX: mirrorX, mirrorY: mirrorY)
        }
    }

    /// Everything `Imaging.render` does, in order.
    func render(_ bytes: [UInt8], recipes: [VariantRecipe]) throws -> RenderResult {
        try Self.validate(recipes)
        guard !bytes.isEmpty else { throw ImagingError.emptyFile }
        guard let format = FormatSniffer.format(of: bytes) else {
            throw ImagingError.notAnImage(looksLike: FormatSniffer.describe(bytes))
        }
        let limit = max(options.pixelLimit, 1)
        // libheif applies a HEIF file's irot/imir; the EXIF Orientation describes the same turn.
        let orientation = (1...8).contains(options.orientation) && !format.isHEIF ? options.orientation : 1
        let transposed = orientation >= 5

        let header = try Self.probe(bytes, format: format, pixelLimit: limit)
        guard header.width > 0, header.height > 0 else {
            throw ImagingError.zeroSize(width: header.width, height: header.height)
        }
        let displayWidth = transposed ? header.height : header.width
        let displayHeight = transposed ? header.width : header.height
        var plans = recipes.map { plan($0, displayWidth: displayWidth, displayHeight: displayHeight) }

        var timings = RenderTimings()
        var mark = Self.threadCPUMilliseconds()
        /// The CPU time since the last lap.
        func lap() -> Double {
            let now = Self.threadCPUMilliseconds()
            defer { mark = now }
            return now - mark
        }
        let decoded: DecodedImage
        let info: ImageInfo
        // Decoded pixels per display pixel when the decoder scales exactly: libjpeg's M/8 decode
        // turns each 8×8 block into M×M pixels, so its pixel i covers source [i·8/M, (i+1)·8/M)
        // even where the rounded-up size holds a partial last pixel.
        var exactScale: Double?
        switch format {
        case .jpeg:
            let scale = Self.jpegScale(
                storedWidth: header.width, storedHeight: header.height, transposed: transposed,
                displayWidth: displayWidth, displayHeight: displayHeight, plans: plans)
            exactScale = Double(scale) / 8
            (info, decoded) = try JPEGCodec.decode(bytes, scaleNumerator: scale, pixelLimit: limit, fast: Self.fastDecode,
                                                   keepCMYK: options.colour == .srgb)
        case .png:
            (info, decoded) = try PNGCodec.decode(bytes, pixelLimit: limit, background: options.background)
        case .heic, .heif, .avif:
            (info, decoded) = try HEIFCodec.decode(bytes, format: format, pixelLimit: limit)
        }
        try Deadline.check()
        let decodedWidth = decoded.raster.width, decodedHeight = decoded.raster.height
        // Another space than sRGB is converted once, on the decoded raster, so that the variants,
        // the crop measures and the placeholder all see sRGB, and the variants carry no profile.
        // A CMYK JPEG's samples go through its CMYK profile. A profile that cannot be used (an
        // unreadable one) would mislabel the pixels: it is dropped too, the decoder's own
        // approximation kept.
        var iccProfile = decoded.iccProfile
        if options.colour == .srgb, let profile = iccProfile, !ColourConversion.isSRGB(profile) {
            if let cmyk = decoded.cmyk {
                _ = ColourConversion.cmykToSRGB(cmyk.storage, inverted: cmyk.inverted, into: decoded.raster, from: profile)
            } else {
                _ = ColourConversion.toSRGB(decoded.raster, from: profile)
            }
            iccProfile = nil
        }
        timings.decode = lap()
        // The orientation costs no copy: its flips are read in place by the resampler and the
        // analysis copy's reduction, and its quarter turn by the resampler, which writes its
        // output transposed (where the processor cannot, the decoded raster is transposed once,
        // a tiled copy, and the stored one freed).
        let steps = Raster.orientationSteps(orientation)
        let turnsInPlace = steps.transpose && Resampler.transposesInPlace
        let stored = steps.transpose && !turnsInPlace ? try decoded.raster.transposed() : decoded.raster
        let uprightWidth = turnsInPlace ? stored.height : stored.width
        let uprightHeight = turnsInPlace ? stored.width : stored.height
        let base = Source(
            raster: stored, ratioX: exactScale ?? Double(uprightWidth) / Double(displayWidth),
            ratioY: exactScale ?? Double(uprightHeight) / Double(displayHeight), mirrorX: steps.mirrorX, mirrorY: steps.mirrorY,
            transposed: turnsInPlace)

        // The `contain` variants first, largest first (a smaller one may be derived from a larger
        // one): they need no crop, and one of them can serve as the analysis copy's source.
        let order = plans.indices.sorted { plans[$0].width * plans[$0].height > plans[$1].width * plans[$1].height }
        var sources = [base]
        var variants = [RenderedVariant?](repeating: nil, count: plans.count)
        /// Resamples and encodes plan `index` from the best source made so far; a `contain`
        /// variant becomes a source for the ones after it.
        func make(_ index: Int) throws {
            let plan = plans[index]
            let window = plan.crop ?? CropRect(x: 0, y: 0, width: displayWidth, height: displayHeight)
            let source = Self.source(for: plan, window: window, among: sources)
            try Deadline.check()
            let raster = try Resampler.resample(
                source.raster,
                windowX: Double(window.x) * source.ratioX, windowY: Double(window.y) * source.ratioY,
                windowWidth: Double(window.width) * source.ratioX, windowHeight: Double(window.height) * source.ratioY,
                width: plan.width, height: plan.height, mirrorX: source.mirrorX, mirrorY: source.mirrorY,
                transposed: source.transposed)
            timings.resample += lap()
            if plan.recipe.fit == .contain {
                sources.append(Source(
                    raster: raster, ratioX: Double(raster.width) / Double(displayWidth),
                    ratioY: Double(raster.height) / Double(displayHeight)))
            }
            let encoded = switch plan.recipe.format {
            case .jpeg:
                try JPEGCodec.encode(raster, quality: plan.recipe.quality, iccProfile: iccProfile,
                                     progressive: Self.encodeProgressive, optimize: Self.encodeOptimized, variant: plan.recipe.name)
            case .webp:
                try WebPCodec.encode(raster, quality: plan.recipe.quality, iccProfile: iccProfile, variant: plan.recipe.name)
            }
            timings.encode += lap()
            variants[index] = RenderedVariant(
                name: plan.recipe.name, width: raster.width, height: raster.height, format: plan.recipe.format,
                bytes: encoded, crop: plan.crop, cropSource: plan.cropSource)
        }
        for index in order where plans[index].recipe.fit == .contain { try make(index) }

        // (The decode itself serves only a picture smaller than the analysis copy's edge.)
        let analysisSource = try Self.analysisSource(among: sources).upright()
        let factor = Self.analysisFactor(analysisSource.raster)
        let analysis = try analysisSource.raster.boxReduced(by: factor, mirrorX: analysisSource.mirrorX, mirrorY: analysisSource.mirrorY)
        // Its luma serves both the statistics and the attention map.
        let luma = PictureAnalysis.luma(of: analysis)
        let statistics = PictureAnalysis.statistics(of: analysis, luma: luma)
        let placeholder = ThumbHash.encode(try Self.placeholderRaster(analysis))
        placeCrops(&plans, analysis: analysis, luma: luma, factor: factor, source: analysisSource,
                   displayWidth: displayWidth, displayHeight: displayHeight)
        timings.analysis = lap()

        // Then the `cover` variants, their windows placed, from any source per the same rule.
        for index in order where plans[index].recipe.fit == .cover { try make(index) }
        var result = RenderResult(
            info: info, displayWidth: displayWidth, displayHeight: displayHeight,
            decodedWidth: decodedWidth, decodedHeight: decodedHeight,
            variants: variants.compactMap { $0 }, statistics: statistics, thumbHash: placeholder)
        result.timings = timings
        return result
    }

    /// The calling thread's CPU time so far, in milliseconds.
    static func threadCPUMilliseconds() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
        return Double(spec.tv_sec) * 1000 + Double(spec.tv_nsec) / 1e6
    }

    /// The header of `bytes` in `format`, refused above `pixelLimit` pixels (0: no limit).
    static func probe(_ bytes: [UInt8], format: ImageFormat, pixelLimit: Int) throws -> ImageInfo {
        switch format {
        case .jpeg: try JPEGCodec.probe(bytes, pixelLimit: pixelLimit)
        case .png: try PNGCodec.probe(bytes, pixelLimit: pixelLimit)
        case .heic, .heif, .avif: try HEIFCodec.probe(bytes, format: format, pixelLimit: pixelLimit)
        }
    }

    /// The analysis copy fitted within ThumbHash's 100×100, the aspect kept.
    static func placeholderRaster(_ analysis: Raster) throws -> Raster {
        let side = ThumbHash.maximumSide
        guard analysis.width > side || analysis.height > side else { return analysis }
        let scale = Double(side) / Double(max(analysis.width, analysis.height))
        let width = max(1, Int((Double(analysis.width) * scale).rounded()))
        let height = max(1, Int((Double(analysis.height) * scale).rounded()))
        return try Resampler.resample(analysis, windowX: 0, windowY: 0, windowWidth: Double(analysis.width),
                                      windowHeight: Double(analysis.height), width: width, height: height)
    }

    /// Refuses recipes that cannot be rendered, naming the recipe and the reason.
    static func validate(_ recipes: [VariantRecipe]) throws {
        for recipe in recipes {
            if recipe.name.isEmpty { throw ImagingError.invalidRecipe(name: recipe.name, reason: "the name is empty") }
            if recipe.width < 1 || recipe.height < 1 {
                throw ImagingError.invalidRecipe(name: recipe.name, reason: "width and height must be at least 1")
            }
            if !(1...100).contains(recipe.quality) {
                throw ImagingError.invalidRecipe(name: recipe.name, reason: "quality must be within 1...100")
            }
        }
    }

    /// Output size and window size of a recipe; a stored crop fixes the window up front.
    func plan(_ recipe: VariantRecipe, displayWidth: Int, displayHeight: Int) -> Plan {
        switch recipe.fit {
        case .contain:
            let size = FitGeometry.containSize(
                sourceWidth: displayWidth, sourceHeight: displayHeight, boxWidth: recipe.width, boxHeight: recipe.height)
            return Plan(
                recipe: recipe, width: size.width, height: size.height, crop: nil, cropSource: .none,
                windowWidth: displayWidth, windowHeight: displayHeight)
        case .cover:
            var window = FitGeometry.coverWindow(
                sourceWidth: displayWidth, sourceHeight: displayHeight, boxWidth: recipe.width, boxHeight: recipe.height)
            var crop: CropRect?
            if let stored = options.crops[recipe.name],
                FitGeometry.isInside(stored, sourceWidth: displayWidth, sourceHeight: displayHeight) {
                if FitGeometry.hasAspect(stored, boxWidth: recipe.width, boxHeight: recipe.height) {
                    crop = stored
                    window = (stored.width, stored.height)
                } else {
                    let centre = (x: Double(stored.x) + Double(stored.width) / 2, y: Double(stored.y) + Double(stored.height) / 2)
                    crop = FitGeometry.window(
                        width: window.width, height: window.height, centredOn: centre,
                        sourceWidth: displayWidth, sourceHeight: displayHeight)
                }
            }
            let size = FitGeometry.coverOutput(
                windowWidth: window.width, windowHeight: window.height, boxWidth: recipe.width, boxHeight: recipe.height)
            return Plan(
                recipe: recipe, width: size.width, height: size.height, crop: crop, cropSource: crop == nil ? .none : .stored,
                windowWidth: window.width, windowHeight: window.height)
        }
    }

    /// Positions the windows of `cover` plans that have no stored crop. `analysis` is `source`
    /// (upright, or the decode with its flips) box-reduced by `factor`, so one of its pixels
    /// covers `factor / source.ratio` display pixels along each axis; `luma` is its luma.
    func placeCrops(
        _ plans: inout [Plan], analysis: Raster, luma: [Float], factor: Int, source: Source, displayWidth: Int, displayHeight: Int
    ) {
        var attention: AttentionCrop?
        for index in plans.indices where plans[index].recipe.fit == .cover && plans[index].crop == nil {
            let plan = plans[index]
            if let focal = options.focalPoint {
                let point = (
                    x: min(max(focal.x, 0), 1) * Double(displayWidth), y: min(max(focal.y, 0), 1) * Double(displayHeight))
                plans[index].crop = FitGeometry.window(
                    width: plan.windowWidth, height: plan.windowHeight, centredOn: point,
                    sourceWidth: displayWidth, sourceHeight: displayHeight)
                plans[index].cropSource = .focalPoint
            } else if options.crop == .attention {
                if attention == nil {
                    attention = AttentionCrop(
                        analysis: analysis, luma: luma, cellWidth: Double(factor) / source.ratioX, cellHeight: Double(factor) / source.ratioY)
                }
                plans[index].crop = attention?.bestWindow(
                    width: plan.windowWidth, height: plan.windowHeight, displayWidth: displayWidth, displayHeight: displayHeight)
                plans[index].cropSource = .attention
            } else {
                plans[index].crop = FitGeometry.window(
                    width: plan.windowWidth, height: plan.windowHeight,
                    centredOn: (Double(displayWidth) / 2, Double(displayHeight) / 2),
                    sourceWidth: displayWidth, sourceHeight: displayHeight)
                plans[index].cropSource = .centre
            }
        }
    }

    /// The source of the analysis copy: the smallest `contain` variant among `sources` (after the
    /// decode, `sources[0]`) whose long edge is at least `analysisMaxEdge`, else the decode. A
    /// variant is upright and a fraction of the decode's size, so its reduction reads megabytes
    /// less; the statistics (sharpness, mean luma, clipping) are then measured on that variant's
    /// Lanczos-resampled pixels at a scale that no longer depends on the decode scale.
    static func analysisSource(among sources: [Source]) -> Source {
        sources.dropFirst()
            .filter { max($0.raster.width, $0.raster.height) >= analysisMaxEdge }
            .min { $0.raster.width * $0.raster.height < $1.raster.width * $1.raster.height } ?? sources[0]
    }

    /// The integer factor that brings `raster`'s long edge to at most `analysisMaxEdge`.
    static func analysisFactor(_ raster: Raster) -> Int {
        max(1, (max(raster.width, raster.height) + analysisMaxEdge - 1) / analysisMaxEdge)
    }

    /// The smallest raster with at least `derivationFactor` source pixels per output pixel, else the decode.
    static func source(for plan: Plan, window: CropRect, among sources: [Source]) -> Source {
        let needX = Double(plan.width) / Double(window.width), needY = Double(plan.height) / Double(window.height)
        var best = sources[0]
        for candidate in sources.dropFirst()
        where candidate.ratioX >= needX * derivationFactor && candidate.ratioY >= needY * derivationFactor
            && candidate.ratioX < best.ratioX {
            best = candidate
        }
        return best
    }

    /// The M of libjpeg's M/8 decode that the render chooses among. 7/8 is left out: libjpeg-turbo
    /// decodes it with scalar IDCTs (7×7, and 14×14 for subsampled chroma), and a full decode, with
    /// its SIMD IDCT, upsampling and colour conversion, costs less. 6/8 serves 8 MP photos (whose
    /// 2,048-pixel variant 5/8 is just too small for) since its 6×6 and 12×12 transforms have AVX2
    /// builds (CJPEG/idct.c); with libjpeg's scalar ones it cost more than 8/8.
    static let jpegScales = [1, 2, 3, 4, 5, 6, 8]

    /// The smallest M of `jpegScales` whose raster still has at least one pixel per output pixel
    /// for every plan (so nothing is ever upscaled), and a long edge of at least
    /// `analysisMaxEdge` (or the picture's own) for the statistics and attention.
    static func jpegScale(
        storedWidth: Int, storedHeight: Int, transposed: Bool, displayWidth: Int, displayHeight: Int, plans: [Plan]
    ) -> Int {
        for numerator in jpegScales.dropLast() {
            // libjpeg rounds scaled sizes up.
            let width = (storedWidth * numerator + 7) / 8, height = (storedHeight * numerator + 7) / 8
            let ratioX = Double(transposed ? height : width) / Double(displayWidth)
            let ratioY = Double(transposed ? width : height) / Double(displayHeight)
            // The analysis copy needs its size too, so the statistics do not depend on the recipes.
            let analysisEdge = min(max(displayWidth, displayHeight), analysisMaxEdge)
            guard max(width, height) >= analysisEdge else { continue }
            let covers = plans.allSatisfy { plan in
                Double(plan.windowWidth) * ratioX >= Double(plan.width) && Double(plan.windowHeight) * ratioY >= Double(plan.height)
            }
            if covers { return numerator }
        }
        return jpegScales[jpegScales.count - 1]
    }
}
