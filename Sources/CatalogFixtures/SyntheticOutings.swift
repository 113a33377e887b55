import Catalog
import Foundation
import SeededRandom

/// Pictures for the tests of either catalog store: random outings of a few authors, clustered
/// in space and time near the date line, in a city and in Reykjavík, some without place or
/// time, so that moments form, merge and stay apart in most orders. The same seed gives the
/// same pictures.
public enum SyntheticOutings {
    public static func pictures(seed: UInt64, count: Int) -> [PictureRecord] {
        var rng = SplitMix64(seed: seed)
        let sites = [(48.8566, 2.3522), (-16.5, 179.9995), (64.1466, -21.9426)]
        let base = 1_700_000_000.0
        return (0..<count).map { i in
            var p = PictureRecord(sha256: String(format: "%016llx%016llx", seed, UInt64(i)), sourceName: "p\(i).jpg",
                                  originalPath: "o/\(i).jpg", mimeType: "image/jpeg", byteSize: 1, width: 4000, height: 3000,
                                  displayWidth: 4000, displayHeight: 3000, orientation: 1, locationSource: "exif",
                                  metadataJson: "{}", createdAt: 0)
            p.authorId = ["ana", "ben", "cy"][Int.random(in: 0..<3, using: &rng)]
            let site = sites[Int.random(in: 0..<sites.count, using: &rng)]
            if Int.random(in: 0..<10, using: &rng) > 0 {
                p.latitude = site.0 + Double.random(in: -0.002...0.002, using: &rng)
                p.longitude = min(180, site.1 + Double.random(in: -0.002...0.002, using: &rng))
            }
            if Int.random(in: 0..<10, using: &rng) > 0 {
                p.momentTime = base + Double(Int.random(in: 0..<4, using: &rng)) * 86_400 + Double.random(in: 0...14_400, using: &rng)
                p.timeTrusted = true
            }
            p.coverScore = Double.random(in: 0...1, using: &rng)
            return p
        }
    }
}
