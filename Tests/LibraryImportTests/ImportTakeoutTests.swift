import Foundation
import Testing
@testable import Ingest
@testable import LibraryImport
import MetadataReading
@testable import PhotoMetadata

/// Google Takeout's JSON, and how the sidecars of one photo merge into the one it is given.
@Suite("Import: Takeout JSON and merged sidecars")
struct ImportTakeoutTests {
    static func object(_ json: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
    }

    @Test func takeoutIsToldFromDarkroomByItsKeys() {
        #expect(TakeoutSidecar.isTakeout(Self.object(#"{"title": "IMG_1.jpg", "photoTakenTime": {"timestamp": "1"}}"#)))
        #expect(TakeoutSidecar.isTakeout(Self.object(#"{"title": "IMG_1.jpg", "geoDataExif": {}}"#)))
        #expect(!TakeoutSidecar.isTakeout(Self.object(#"{"title": "Party", "author_id": "u1", "taken_at": "2024-05-07T18:00:00Z"}"#)))
        #expect(!TakeoutSidecar.isTakeout([:]))
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var json: String
        var takenAt: Double?
        var latitude: Double?
        var longitude: Double?
        var altitude: Double?
        var locationKey: String?
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "timestamp as text, geoData", json: #"{"photoTakenTime": {"timestamp": "1561978800", "formatted": "1 Jul 2019"}, "geoData": {"latitude": 48.8566, "longitude": 2.3522, "altitude": 35.0}}"#,
             takenAt: 1_561_978_800, latitude: 48.8566, longitude: 2.3522, altitude: 35, locationKey: "geoData"),
        Case(name: "timestamp as a number", json: #"{"photoTakenTime": {"timestamp": 1561978800}}"#, takenAt: 1_561_978_800),
        Case(name: "timestamp 0 is unknown", json: #"{"photoTakenTime": {"timestamp": "0"}, "geoData": {"latitude": 0.0, "longitude": 0.0}}"#),
        Case(name: "geoData 0,0 falls back to geoDataExif", json: #"{"geoData": {"latitude": 0.0, "longitude": 0.0, "altitude": 0.0}, "geoDataExif": {"latitude": -33.8568, "longitude": 151.2153, "altitude": 0.0}}"#,
             latitude: -33.8568, longitude: 151.2153, locationKey: "geoDataExif"),
        Case(name: "values of the wrong kind read as absent", json: #"{"photoTakenTime": {"timestamp": true}, "geoData": {"latitude": "x", "longitude": 2}}"#),
    ]

    @Test(arguments: cases)
    func takeoutFields(_ c: Case) {
        let takeout = TakeoutSidecar(object: Self.object(c.json))
        #expect(takeout.takenAt?.timeIntervalSince1970 == c.takenAt)
        #expect(takeout.latitude == c.latitude)
        #expect(takeout.longitude == c.longitude)
        #expect(takeout.altitude == c.altitude)
        #expect(takeout.locationKey == c.locationKey)
    }

    @Test func anInstantIsWrittenInTheDefaultZone() throws {
        let instant = Date(timeIntervalSince1970: 1_561_978_800)
        #expect(TakeoutSidecar.isoText(instant, in: try #require(TimeZone(identifier: "UTC"))) == "2019-07-01T11:00:00+00:00")
        #expect(TakeoutSidecar.isoText(instant, in: try #require(TimeZone(identifier: "Europe/Paris"))) == "2019-07-01T13:00:00+02:00")
        #expect(TakeoutSidecar.isoText(instant.addingTimeInterval(0.25), in: try #require(TimeZone(identifier: "America/St_Johns")))
                == "2019-07-01T08:30:00.250-02:30")
    }

    /// A folder with files, removed afterwards.
    final class Folder {
        let path = NSTemporaryDirectory() + "darkroom-import-sidecars-" + UUID().uuidString
        init(_ files: [String: String]) {
            try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            for (name, text) in files { _ = FileManager.default.createFile(atPath: path + "/" + name, contents: Data(text.utf8)) }
        }
        deinit { try? FileManager.default.removeItem(atPath: path) }
    }

    static let utc = TimeZone(identifier: "UTC") ?? .gmt
    static let takeout = #"{"title": "IMG_1.jpg", "photoTakenTime": {"timestamp": "1561978800"}, "geoData": {"latitude": 48.8566, "longitude": 2.3522, "altitude": 0.0}}"#
    static let xmp = """
        <x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
        <rdf:Description rdf:about="" xmlns:exif="http://ns.adobe.com/exif/1.0/" exif:DateTimeOriginal="2019-08-15T09:00:00+02:00" exif:GPSLatitude="45,11.31N" exif:GPSLongitude="5,43.47E"/>
        </rdf:RDF></x:xmpmeta>
        """

    @Test func takeoutFillsWhatTheDarkroomSidecarLacksAndSaysSo() throws {
        let folder = Folder(["IMG_1.jpg.json": Self.takeout, "IMG_1.xmp": Self.xmp])
        let match = ImportSidecarMatcher.Match(json: "IMG_1.jpg.json", jsonRule: .exact, xmp: "IMG_1.xmp")
        let loaded = try ImportSidecars.load(directory: folder.path, photo: "IMG_1.jpg", match: match, author: "ann", zone: Self.utc)
        let sidecar = try #require(loaded.sidecar)
        #expect(sidecar.takenAt == "2019-07-01T11:00:00+00:00", "Takeout before XMP")
        #expect(sidecar.latitude == 48.8566 && sidecar.longitude == 2.3522)
        #expect(sidecar.authorId == "ann")
        #expect(loaded.used == ["takeout:IMG_1.jpg.json", "xmp:IMG_1.xmp"])
        #expect(loaded.notes.contains { $0.contains("Google Takeout sidecar IMG_1.jpg.json") && $0.contains("photoTakenTime") && $0.contains("geoData") })
        #expect(loaded.notes.contains { $0.contains("XMP sidecar IMG_1.xmp: nothing used") })
        #expect(loaded.json?.contains("\"author_id\":\"ann\"") == true)
    }

    @Test func theDarkroomSidecarIsTheUploadersWord() throws {
        let folder = Folder(["IMG_1.jpg.json": #"{"author_id": "grandma", "taken_at": "2018-12-24T18:00:00+01:00"}"#, "IMG_1.xmp": Self.xmp])
        let match = ImportSidecarMatcher.Match(json: "IMG_1.jpg.json", jsonRule: .exact, xmp: "IMG_1.xmp")
        let loaded = try ImportSidecars.load(directory: folder.path, photo: "IMG_1.jpg", match: match, author: "ann", zone: Self.utc)
        let sidecar = try #require(loaded.sidecar)
        #expect(sidecar.authorId == "grandma", "--author fills only what no sidecar says")
        #expect(sidecar.takenAt == "2018-12-24T18:00:00+01:00")
        #expect(sidecar.latitude == 45 + 11.31 / 60, "XMP fills the place")
        #expect(loaded.used == ["darkroom:IMG_1.jpg.json", "xmp:IMG_1.xmp"])
    }

    @Test func aMalformedDarkroomSidecarFailsThePhoto() {
        let folder = Folder(["IMG_1.jpg.json": #"{"author_id": 42}"#])
        let match = ImportSidecarMatcher.Match(json: "IMG_1.jpg.json", jsonRule: .exact)
        #expect(throws: ProcessingFailure.self) {
            try ImportSidecars.load(directory: folder.path, photo: "IMG_1.jpg", match: match, author: nil, zone: Self.utc)
        }
        let broken = Folder(["IMG_1.jpg.json": "{not json"])
        do {
            _ = try ImportSidecars.load(directory: broken.path, photo: "IMG_1.jpg", match: match, author: nil, zone: Self.utc)
            Issue.record("a sidecar that is not JSON must fail the photo")
        } catch {
            #expect(error.reason.contains("IMG_1.jpg.json") && error.reason.contains("--retry-failed"))
        }
    }

    @Test func aLooselyMatchedTakeoutJSONForAnotherPhotoIsIgnored() throws {
        let folder = Folder(["IMG_1.json": #"{"title": "IMG_1.HEIC", "photoTakenTime": {"timestamp": "1561978800"}}"#,
                             "IMG_2.json": #"{"title": "Holiday.jpg", "photoTakenTime": {"timestamp": "1561978800"}}"#])
        let same = try ImportSidecars.load(directory: folder.path, photo: "IMG_1.jpg",
                                           match: .init(json: "IMG_1.json", jsonRule: .withoutExtension), author: nil, zone: Self.utc)
        #expect(same.sidecar?.takenAt != nil, "the same name but for the extension")
        let other = try ImportSidecars.load(directory: folder.path, photo: "IMG_2.jpg",
                                            match: .init(json: "IMG_2.json", jsonRule: .withoutExtension), author: nil, zone: Self.utc)
        #expect(other.sidecar == nil)
        #expect(other.notes.contains { $0.contains("is for \"Holiday.jpg\"") })
    }

    @Test func titlesOfCutAndEditedNames() {
        #expect(ImportSidecars.titleAgrees(photo: "IMG_1-edited.jpg", title: "IMG_1.jpg"))
        #expect(ImportSidecars.titleAgrees(photo: "Screenshot_20190701-110000_A_Very_Long_Applica.jpg",
                                           title: "Screenshot_20190701-110000_A_Very_Long_Application_Name.jpg"))
        #expect(!ImportSidecars.titleAgrees(photo: "IMG_12.jpg", title: "IMG_1.jpg"))
    }
}

extension Error {
    var reason: String { ProcessingFailure(self).reason }
}
