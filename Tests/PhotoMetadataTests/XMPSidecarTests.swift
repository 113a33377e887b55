import Foundation
import Testing
@testable import MetadataReading

/// XMP sidecars as Lightroom, darktable and digiKam write them, and the odd cases.
@Suite("XMP sidecars")
struct XMPSidecarTests {
    static func packet(_ description: String, namespaces: String = #"xmlns:exif="http://ns.adobe.com/exif/1.0/""#) -> String {
        """
        <?xpacket begin="\u{FEFF}" id="W5M0MpCehiHzreSzNTczkc9d"?>
        <x:xmpmeta xmlns:x="adobe:ns:meta/">
         <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
          <rdf:Description rdf:about="" \(namespaces)
            xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/"\(description)
         </rdf:RDF>
        </x:xmpmeta>
        <?xpacket end="w"?>
        """
    }

    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var xml: String
        var takenAt: String?
        var latitude: Double?
        var longitude: Double?
        var altitude: Double? = nil
        var problems = 0
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "attributes, DDD,MM.mmmmK", xml: packet(#" exif:DateTimeOriginal="2019-07-01T13:30:00+02:00" exif:GPSLatitude="48,51.396N" exif:GPSLongitude="2,21.132E"/>"#),
             takenAt: "2019-07-01T13:30:00+02:00", latitude: 48.8566, longitude: 2.3522),
        Case(name: "elements under another prefix", xml: packet(">\n<e:DateTimeOriginal>2019-07-01T13:30:00</e:DateTimeOriginal><e:GPSLatitude>33,52.0S</e:GPSLatitude>\n<e:GPSLongitude>151,12.5E</e:GPSLongitude></rdf:Description>",
                                                                 namespaces: #"xmlns:e="http://ns.adobe.com/exif/1.0/""#),
             takenAt: "2019-07-01T13:30:00", latitude: -(33 + 52.0 / 60), longitude: 151 + 12.5 / 60),
        Case(name: "degrees, minutes, seconds", xml: packet(#" exif:GPSLatitude="37,44,48.354N" exif:GPSLongitude="119,31,47.58W"/>"#),
             latitude: 37 + 44 / 60.0 + 48.354 / 3600, longitude: -(119 + 31 / 60.0 + 47.58 / 3600)),
        Case(name: "decimal degrees, signed or lettered", xml: packet(#" exif:GPSLatitude="-33.8568" exif:GPSLongitude="151.2153E"/>"#),
             latitude: -33.8568, longitude: 151.2153),
        Case(name: "exactly 0, 0 is no location", xml: packet(#" exif:GPSLatitude="0,0.0N" exif:GPSLongitude="0,0.0E"/>"#),
             problems: 1),
        Case(name: "a latitude with an east letter", xml: packet(#" exif:GPSLatitude="48,51.396E" exif:GPSLongitude="2,21.132E"/>"#),
             problems: 1),
        Case(name: "sixty minutes", xml: packet(#" exif:GPSLatitude="48,60.0N" exif:GPSLongitude="2,21.132E"/>"#), problems: 1),
        Case(name: "latitude without longitude", xml: packet(#" exif:GPSLatitude="48,51.396N"/>"#), problems: 1),
        Case(name: "altitude below sea level", xml: packet(#" exif:GPSLatitude="31,30.0N" exif:GPSLongitude="35,30.0E" exif:GPSAltitude="430/1" exif:GPSAltitudeRef="1"/>"#),
             latitude: 31.5, longitude: 35.5, altitude: -430),
        Case(name: "minutes only: seconds added", xml: packet(#" exif:DateTimeOriginal="2019-07-01T13:30"/>"#), takenAt: "2019-07-01T13:30:00"),
        Case(name: "EXIF-style date", xml: packet(#" exif:DateTimeOriginal="2019:07:01 13:30:05"/>"#), takenAt: "2019-07-01T13:30:05"),
        Case(name: "fraction and Z", xml: packet(#" exif:DateTimeOriginal="2019-07-01T13:30:00.25Z"/>"#), takenAt: "2019-07-01T13:30:00.250Z"),
        Case(name: "a date with no time of day", xml: packet(#" exif:DateTimeOriginal="2019-07-01"/>"#), problems: 1),
        Case(name: "photoshop:DateCreated when DateTimeOriginal is absent", xml: packet(#" photoshop:DateCreated="2018-12-24T18:00:00+01:00"/>"#),
             takenAt: "2018-12-24T18:00:00+01:00"),
        Case(name: "character references", xml: packet(#" exif:DateTimeOriginal="2019-07-01T13:30:00&#43;02:00"/>"#),
             takenAt: "2019-07-01T13:30:00+02:00"),
        Case(name: "a comment is not a property", xml: packet("><!-- exif:GPSLatitude=\"1,0N\" exif:GPSLongitude=\"1,0E\" --></rdf:Description>")),
        Case(name: "the exif prefix bound elsewhere", xml: packet(#" exif:GPSLatitude="48,51.396N" exif:GPSLongitude="2,21.132E"/>"#,
                                                                  namespaces: #"xmlns:exif="http://example.com/not-exif/""#)),
        Case(name: "Lightroom lists and nested elements do not interfere",
             xml: packet(#" exif:DateTimeOriginal="2019-08-15T09:00:00+02:00"><dc:subject><rdf:Bag><rdf:li>alps</rdf:li></rdf:Bag></dc:subject><exif:GPSLatitude>45,11.31N</exif:GPSLatitude><exif:GPSLongitude>5,43.47E</exif:GPSLongitude></rdf:Description>"#),
             takenAt: "2019-08-15T09:00:00+02:00", latitude: 45 + 11.31 / 60, longitude: 5 + 43.47 / 60),
        Case(name: "not XML at all", xml: "this is not XMP"),
    ]

    @Test(arguments: cases)
    func reads(_ c: Case) {
        let xmp = XMPSidecar(bytes: Array(c.xml.utf8))
        #expect(xmp.takenAt == c.takenAt)
        if let latitude = c.latitude, let longitude = c.longitude {
            #expect(abs((xmp.latitude ?? .nan) - latitude) < 1e-9)
            #expect(abs((xmp.longitude ?? .nan) - longitude) < 1e-9)
        } else {
            #expect(xmp.latitude == nil && xmp.longitude == nil)
        }
        #expect(xmp.altitude == c.altitude)
        #expect(xmp.problems.count == c.problems, "\(xmp.problems)")
    }

    @Test func coordinateForms() {
        #expect(XMPSidecar.coordinate("48,51.396N", positive: "N", negative: "S", limit: 90).map { abs($0 - 48.8566) < 1e-9 } == true)
        #expect(XMPSidecar.coordinate("48.8566n", positive: "N", negative: "S", limit: 90) == 48.8566)
        #expect(XMPSidecar.coordinate("-48.5S", positive: "N", negative: "S", limit: 90) == nil, "a sign and a letter")
        #expect(XMPSidecar.coordinate("91,0N", positive: "N", negative: "S", limit: 90) == nil)
        #expect(XMPSidecar.coordinate("181.0", positive: "E", negative: "W", limit: 180) == nil)
        #expect(XMPSidecar.coordinate("", positive: "E", negative: "W", limit: 180) == nil)
        #expect(XMPSidecar.coordinate("1,2,3,4N", positive: "N", negative: "S", limit: 90) == nil)
    }
}
