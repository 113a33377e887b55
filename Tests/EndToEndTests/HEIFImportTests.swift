import Catalog
import Foundation
import GRDB
import Testing

/// A phone folder of HEIC photos through `darkroom import`.
@Suite("HEIC import")
struct HEIFImportTests {
    static let photo = Corpus.root + "/heif/metadata-extractor/exif-at-eof.heic"

    @Test("an imported HEIC ends as a picture in its declared moment, its original kept byte for byte as .heic",
          .enabled(if: FileManager.default.fileExists(atPath: photo), "../shared/corpus/heif not found"))
    func anImportedHEICEndsInItsMoment() throws {
        let space = try Workspace()
        #expect(try space.run(["places", "add", "--id", "1", "--name", "Steppe", "--lat", "47.2071", "--long", "106.2431", "--rad", "500"]).status == 0)
        #expect(try space.run(["moments", "create", "--id", "10", "--place", "1", "--start", "2020-05-04T18:00:00-04:00",
                               "--end", "2020-05-04T19:00:00-04:00", "--title", "Evening"]).status == 0)
        let tree = LibraryTree(space.root + "/phone")
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.photo)))
        try tree.write("DCIM/IMG_2927.HEIC", bytes)
        let run = try space.run(["import", tree.root, "--progress", "none"])
        #expect(run.status == 0, "\(run.stderr)")

        let pictures = try space.catalog().read { db in try PictureRecord.fetchAll(db) }
        #expect(pictures.count == 1)
        let picture = try #require(pictures.first)
        #expect(picture.momentId == 10)
        #expect(picture.mimeType == "image/heic")
        #expect(picture.displayWidth == 3024 && picture.displayHeight == 4032)
        #expect(picture.originalPath.hasSuffix(".heic"))
        let kept = [UInt8](try Data(contentsOf: URL(fileURLWithPath: space.library + "/" + picture.originalPath)))
        #expect(kept == bytes)
    }
}
