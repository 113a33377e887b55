import Foundation
import Testing
@testable import Imaging

/// Every corpus file goes through probe and render without a crash or hang.
@Suite("Corpus")
struct CorpusRenderTests {
    /// The variant size the recipe implies for a displayed size, computed independently of FitGeometry.
    static func expectedSize(_ recipe: VariantRecipe, displayWidth w: Int, displayHeight h: Int) -> (Double, Double) {
        switch recipe.fit {
        case .contain:
            let s = min(1, Double(recipe.width) / Double(w), Double(recipe.height) / Double(h))
            return (Double(w) * s, Double(h) * s)
        case .cover:
            // Largest window of the box's aspect, then shrunk to the box if it is larger.
            let aspect = Double(recipe.width) / Double(recipe.height)
            let window = Double(w) / Double(h) > aspect ? (Double(h) * aspect, Double(h)) : (Double(w), Double(w) / aspect)
            let s = min(1, Double(recipe.width) / window.0)
            return (window.0 * s, window.1 * s)
        }
    }

    @Test("every corpus file renders or throws an ImagingError", .enabled(if: Corpus.isAvailable, "../shared/corpus not found"),
          arguments: Corpus.imageFiles())
    func renderOrRefuse(path: String) throws {
        let bytes = try Corpus.bytes(path)
        let row = Corpus.manifest[path]
        let orientation = row?.orientation ?? 1
        let probed = try? Imaging.probe(bytes)
        do {
            let result = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions(orientation: orientation))
            #expect(probed == result.info, "\(path): probe and render disagree on the header")
            let transposed = (5...8).contains(orientation)
            #expect(result.displayWidth == (transposed ? result.info.height : result.info.width))
            #expect(result.variants.map(\.name) == VariantRecipe.defaults.map(\.name))
            for (variant, recipe) in zip(result.variants, VariantRecipe.defaults) {
                let expected = Self.expectedSize(recipe, displayWidth: result.displayWidth, displayHeight: result.displayHeight)
                #expect(abs(Double(variant.width) - expected.0) <= 1, "\(path) \(variant.name) width \(variant.width) vs \(expected.0)")
                #expect(abs(Double(variant.height) - expected.1) <= 1, "\(path) \(variant.name) height \(variant.height) vs \(expected.1)")
                let info = try Imaging.probe(variant.bytes)
                #expect(info.width == variant.width && info.height == variant.height)
            }
            if let row, let width = row.width, let height = row.height, width > 0, height > 0 {
                #expect(result.info.width == width && result.info.height == height, "\(path): header size vs manifest")
            }
        } catch let error as ImagingError {
            let description = error.description
            #expect(!description.isEmpty && !description.contains("\n"))
            // What the independent decoder (Pillow) decodes, Darkroom decodes too.
            if let row, row.pillowDecodes {
                Issue.record("\(path): Pillow decodes it but Darkroom refused: \(description)")
            }
        }
    }
}
