import Testing
@testable import LibraryImport

/// Takeout, XMP and Darkroom sidecar names, including the odd ones Takeout writes.
@Suite("Import: sidecar names")
struct ImportSidecarMatcherTests {
    typealias Rule = ImportSidecarMatcher.Rule

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var photos: [String]
        var sidecars: [String]
        /// photo → (json, rule); photos absent here must get no JSON.
        var expected: [String: (String, Rule)]
        var testDescription: String { name }
    }

    static let long = "Screenshot_20190701-110000_A_Very_Long_Application_Name.jpg"
    static let medium = "IMG_20190701_123456789_HDR_portrait_blurr.jpg"

    static let cases: [Case] = [
        Case(name: "exact name", photos: ["IMG_1.jpg"], sidecars: ["IMG_1.jpg.json"], expected: ["IMG_1.jpg": ("IMG_1.jpg.json", .exact)]),
        Case(name: "supplemental-metadata", photos: ["IMG_1.jpg"], sidecars: ["IMG_1.jpg.supplemental-metadata.json"],
             expected: ["IMG_1.jpg": ("IMG_1.jpg.supplemental-metadata.json", .supplemental)]),
        Case(name: "supplemental-metadata cut short", photos: ["IMG_1.jpg"], sidecars: ["IMG_1.jpg.supplemental-me.json"],
             expected: ["IMG_1.jpg": ("IMG_1.jpg.supplemental-me.json", .supplemental)]),
        Case(name: "supplemental cut at 46 characters", photos: [medium],
             sidecars: [String((medium + ".supplemental-metadata").prefix(46)) + ".json"],
             expected: [medium: (String((medium + ".supplemental-metadata").prefix(46)) + ".json", .supplemental)]),
        Case(name: "long name cut at 46", photos: [long], sidecars: [String(long.prefix(46)) + ".json"],
             expected: [long: (String(long.prefix(46)) + ".json", .truncated)]),
        Case(name: "long name cut at 47", photos: [long], sidecars: [String(long.prefix(47)) + ".json"],
             expected: [long: (String(long.prefix(47)) + ".json", .truncated)]),
        Case(name: "numbered copy: the number moves to the JSON's end", photos: ["IMG_1.jpg", "IMG_1(1).jpg"],
             sidecars: ["IMG_1.jpg.json", "IMG_1.jpg(1).json"],
             expected: ["IMG_1.jpg": ("IMG_1.jpg.json", .exact), "IMG_1(1).jpg": ("IMG_1.jpg(1).json", .exact)]),
        Case(name: "numbered copy of a supplemental sidecar", photos: ["IMG_1(2).jpg"],
             sidecars: ["IMG_1.jpg.supplemental-metadata(2).json"],
             expected: ["IMG_1(2).jpg": ("IMG_1.jpg.supplemental-metadata(2).json", .supplemental)]),
        Case(name: "numbered copy of a cut name", photos: [String(long.dropLast(4)) + "(1).jpg"],
             sidecars: [String(long.prefix(46)) + "(1).json"],
             expected: [String(long.dropLast(4)) + "(1).jpg": (String(long.prefix(46)) + "(1).json", .truncated)]),
        Case(name: "a numbered copy never takes the original's sidecar", photos: ["IMG_1(1).jpg"], sidecars: ["IMG_1.jpg.json"],
             expected: [:]),
        Case(name: "parentheses that are part of the name", photos: ["Party(1).jpg"], sidecars: ["Party(1).jpg.json"],
             expected: ["Party(1).jpg": ("Party(1).jpg.json", .exact)]),
        Case(name: "without the photo's extension", photos: ["IMG_1.jpg"], sidecars: ["IMG_1.json"],
             expected: ["IMG_1.jpg": ("IMG_1.json", .withoutExtension)]),
        Case(name: "the exact name wins over the one without extension", photos: ["IMG_1.jpg", "IMG_1.png"],
             sidecars: ["IMG_1.json", "IMG_1.png.json"],
             expected: ["IMG_1.jpg": ("IMG_1.json", .withoutExtension), "IMG_1.png": ("IMG_1.png.json", .exact)]),
        Case(name: "an edited copy shares its original's sidecar", photos: ["IMG_1.jpg", "IMG_1-edited.jpg"],
             sidecars: ["IMG_1.jpg.json"],
             expected: ["IMG_1.jpg": ("IMG_1.jpg.json", .exact), "IMG_1-edited.jpg": ("IMG_1.jpg.json", .editedCopy)]),
        Case(name: "an edited copy alone still finds it", photos: ["IMG_1-bearbeitet.jpg"], sidecars: ["IMG_1.jpg.json"],
             expected: ["IMG_1-bearbeitet.jpg": ("IMG_1.jpg.json", .editedCopy)]),
        Case(name: "a short prefix is no match", photos: ["IMG_10.jpg"], sidecars: ["IMG_1.json", "IMG_1.jpg.json"], expected: [:]),
        Case(name: "album metadata matches nothing", photos: ["IMG_1.jpg"], sidecars: ["metadata.json", "print-subscriptions.json"],
             expected: [:]),
    ]

    @Test(arguments: cases)
    func takeoutNames(_ c: Case) {
        let matches = ImportSidecarMatcher.match(photos: c.photos, sidecars: c.sidecars)
        for photo in c.photos {
            if let (json, rule) = c.expected[photo] {
                #expect(matches[photo]?.json == json, "\(photo)")
                #expect(matches[photo]?.jsonRule == rule, "\(photo)")
            } else {
                #expect(matches[photo]?.json == nil, "\(photo) took \(matches[photo]?.json ?? "")")
            }
        }
    }

    @Test func eachJSONGoesToOnePhotoTheClosestFirst() {
        // IMG_1.jpg.json is IMG_1.jpg's exactly; IMG_1.png can then only have IMG_1.json.
        let matches = ImportSidecarMatcher.match(photos: ["IMG_1.png", "IMG_1.jpg"], sidecars: ["IMG_1.jpg.json"])
        #expect(matches["IMG_1.jpg"]?.json == "IMG_1.jpg.json")
        #expect(matches["IMG_1.png"]?.json == nil)
    }

    @Test func xmpNamesWithAndWithoutThePhotosExtension() {
        let matches = ImportSidecarMatcher.match(photos: ["IMG_1.jpg", "IMG_2.jpg", "IMG_3.CR2", "IMG_3.jpg", "IMG_4.jpg"],
                                                 sidecars: ["IMG_1.jpg.xmp", "IMG_1.xmp", "IMG_2.XMP", "IMG_3.xmp"])
        #expect(matches["IMG_1.jpg"]?.xmp == "IMG_1.jpg.xmp", "the photo's full name first")
        #expect(matches["IMG_2.jpg"]?.xmp == "IMG_2.XMP")
        #expect(matches["IMG_3.CR2"]?.xmp == "IMG_3.xmp", "a raw file and its JPEG share one")
        #expect(matches["IMG_3.jpg"]?.xmp == "IMG_3.xmp")
        #expect(matches["IMG_4.jpg"] == nil)
    }

    @Test func sidecarNamesAreNeverPhotos() {
        #expect(ImportSidecarMatcher.isSidecarName("IMG_1.jpg.json"))
        #expect(ImportSidecarMatcher.isSidecarName("IMG_1.XMP"))
        #expect(!ImportSidecarMatcher.isSidecarName("IMG_1.jpg"))
        #expect(!ImportSidecarMatcher.isSidecarName("json"))
    }

    @Test func aLargeTakeoutFolderMatchesQuickly() {
        let photos = (0..<5000).map { "IMG_\($0).jpg" } + (0..<500).map { "IMG_\($0)(1).jpg" }
        let sidecars = (0..<5000).map { "IMG_\($0).jpg.supplemental-metadata.json" } + (0..<500).map { "IMG_\($0).jpg(1).json" }
        let started = ContinuousClock.now
        let matches = ImportSidecarMatcher.match(photos: photos, sidecars: sidecars)
        #expect(matches.count == photos.count)
        #expect(matches["IMG_42(1).jpg"]?.json == "IMG_42.jpg(1).json")
        #expect(ContinuousClock.now - started < .seconds(5))
    }
}
