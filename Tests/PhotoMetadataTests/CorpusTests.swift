import Foundation
import Testing
@testable import MetadataReading
@testable import PhotoMetadata
import SeededRandom

/// Agreement with an independent reader (ExifTool, in MANIFEST.tsv) on the real photos of
/// the shared corpus, and no crash on any of its files.
@Suite("Corpus agreement", .enabled(if: Corpus.isAvailable, "../shared/corpus not found (set DARKROOM_CORPUS)"))
struct CorpusTests {
    private static let originalSources: Set<TimeSource> = [
        .exifOriginal, .exifOriginalGPSOffset, .exifOriginalMakerNoteZone, .exifOriginalPlaceZone, .exifOriginalAssumedZone,
    ]

    @Test("every manifest row agrees with ExifTool's values")
    func manifestAgreement() throws {
        let rows = try Corpus.manifest()
        #expect(rows.count > 300)
        var mismatches: [String] = []
        var notes: [String] = []
        var counts = (rows: 0, times: 0, offsets: 0, locations: 0, refused: 0, orientations: 0, cameras: 0)
        for row in rows {
            let bytes = try Corpus.bytes(row.path)
            let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: .standard)
            counts.rows += 1
            func fail(_ what: String) { mismatches.append("\(row.path): \(what)") }

            // Identity: every file.
            if metadata.sha256 != row["sha256"] { fail("sha256 \(metadata.sha256) != \(row["sha256"])") }
            if String(metadata.byteSize) != row["bytes"] { fail("size \(metadata.byteSize) != \(row["bytes"])") }

            // DateTimeOriginal, to the second, compared as wall time.
            let time = metadata.captureTime
            let fromOriginal = time.map { Self.originalSources.contains($0.source) } ?? false
            let expectedTime = row["DateTimeOriginal"]
            if expectedTime.isEmpty {
                if fromOriginal { fail("DateTimeOriginal read as \(time?.localTime ?? "") but ExifTool has none") }
            } else {
                counts.times += 1
                let wall = expectedTime.replacingOccurrences(of: " ", with: "T")
                let expectedWall = String(wall.prefix(10)).replacingOccurrences(of: ":", with: "-") + wall.dropFirst(10)
                if !fromOriginal || time.map({ String($0.localTime.prefix(19)) }) != expectedWall {
                    fail("DateTimeOriginal \(time?.localTime ?? "nil") (\(time?.source.rawValue ?? "-")) != \(expectedWall)")
                }
            }

            // OffsetTimeOriginal.
            let expectedOffset = row["OffsetTimeOriginal"]
            if expectedOffset.isEmpty {
                if time?.source == .exifOriginal { fail("OffsetTimeOriginal read but ExifTool has none") }
            } else {
                counts.offsets += 1
                guard case .valid(let seconds) = LocalDateTime.parseOffset(expectedOffset) else {
                    fail("manifest offset \(expectedOffset) unreadable")
                    continue
                }
                if time?.source != .exifOriginal || time?.offsetSeconds != seconds {
                    fail("OffsetTimeOriginal \(String(describing: time?.offsetSeconds)) != \(expectedOffset)")
                }
            }

            // GPS: a usable manifest position must match to 1e-6 degrees; a flagged one must be refused.
            if let expected = Self.usablePosition(row) {
                counts.locations += 1
                if let location = metadata.location {
                    if abs(location.latitude - expected.latitude) > 1e-6 || abs(location.longitude - expected.longitude) > 1e-6 {
                        fail("GPS \(location.latitude), \(location.longitude) != \(expected.latitude), \(expected.longitude)")
                    }
                } else {
                    fail("GPS missing, ExifTool has \(expected.latitude), \(expected.longitude): \(metadata.warnings)")
                }
            } else {
                if !row["GPSLatitude"].isEmpty || !row["GPSLongitude"].isEmpty || row["notes"].contains("GPS IFD")
                    || row.path.hasSuffix("empty_gps_ifd.jpg") {
                    counts.refused += 1
                }
                if let location = metadata.location {
                    fail("GPS \(location.latitude), \(location.longitude) read where the manifest has no usable position")
                }
            }

            // Orientation. The manifest's 0 is invalid: we report 1 with a warning. An empty cell
            // (no Orientation for ExifTool) must also read as 1; usually with a "no EXIF Orientation"
            // warning, but where libexif reads an explicit 1 from a directory ExifTool gave up on
            // (hopper_bad_exif.jpg: IFD0 claims 32 entries, holds 6) the value agrees and is noted.
            let expectedOrientation = row["Orientation"]
            if let value = Int(expectedOrientation), (1...8).contains(value) {
                counts.orientations += 1
                if metadata.orientation != value { fail("Orientation \(metadata.orientation) != \(value)") }
            } else if expectedOrientation.isEmpty {
                if metadata.orientation != 1 { fail("Orientation \(metadata.orientation) where ExifTool has none") }
                if !metadata.warnings.contains(where: { $0.contains("no EXIF Orientation") }) {
                    notes.append("\(row.path): Orientation 1 read where ExifTool has none")
                }
            } else {
                counts.orientations += 1
                if metadata.orientation != 1 { fail("Orientation \(metadata.orientation) for invalid '\(expectedOrientation)'") }
                if !metadata.warnings.contains(where: { $0.contains("Orientation \(expectedOrientation) is not 1-8") }) {
                    fail("no warning for invalid orientation '\(expectedOrientation)'")
                }
            }

            // Make and Model, trimmed.
            for (column, value) in [("Make", metadata.make), ("Model", metadata.model)] {
                let expected = row[column].trimmingCharacters(in: .whitespaces)
                if !expected.isEmpty { counts.cameras += 1 }
                if (value ?? "") != expected { fail("\(column) \(value ?? "nil") != \(expected)") }
            }
        }
        print("corpus agreement: \(counts.rows) rows (sha256 + size each); compared \(counts.times) DateTimeOriginal, "
              + "\(counts.offsets) OffsetTimeOriginal, \(counts.locations) GPS positions, \(counts.refused) refused GPS, "
              + "\(counts.orientations) orientations, \(counts.cameras) make/model values; \(mismatches.count) mismatches")
        for note in notes { print("  note: \(note)") }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "\n"))")
    }

    /// The manifest's position when it is one: both coordinates present, in range, not (0, 0), and
    /// not flagged in the notes as missing a reference or a latitude/longitude.
    private static func usablePosition(_ row: Corpus.Row) -> (latitude: Double, longitude: Double)? {
        guard let latitude = Double(row["GPSLatitude"]), let longitude = Double(row["GPSLongitude"]),
              abs(latitude) <= 90, abs(longitude) <= 180, !(latitude == 0 && longitude == 0)
        else { return nil }
        let notes = row["notes"]
        if notes.contains("GPSLatitudeRef missing") || notes.contains("GPSLongitudeRef missing")
            || notes.contains("0,0") || notes.contains("no lat/lon") {
            return nil
        }
        return (latitude, longitude)
    }

    @Test("the flagged GPS files read as no location, with the reason")
    func refusedPositions() throws {
        for (path, reason) in [("jpeg/pillow/exif_gps.jpg", "GPSLatitudeRef missing"),
                               ("jpeg/pillow/empty_gps_ifd.jpg", "GPS IFD is empty"),
                               // Latitude and longitude of 0/0 and no references: ExifTool drops the 0/0.
                               ("jpeg/exifr/broken1.jpg", "GPSLatitudeRef missing")] {
            let metadata = PhotoMetadata.read(try Corpus.bytes(path), sidecar: nil, fileTime: nil, options: .standard)
            #expect(metadata.location == nil, "\(path)")
            #expect(metadata.warnings.contains { $0.contains(reason) }, "\(path): \(metadata.warnings)")
        }
    }

    @Test("the huge eXIf chunk is ignored with a warning")
    func hugeExifChunk() throws {
        let bytes = try Corpus.bytes("png/libpng-crashers/huge_eXIf_chunk.png")
        let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: .standard)
        #expect(metadata.mimeType == "image/png")
        #expect(metadata.warnings.contains { $0.contains("eXIf chunk claims") }, "\(metadata.warnings)")
    }

    @Test("random corruption of real camera EXIF (maker notes included) never crashes")
    func corruptedCameraExif() throws {
        var generator = SplitMix64(seed: 0xC0FFEE)
        for path in ["jpeg/metadata-extractor/Apple_iPhone_6.jpg", "jpeg/digicam-corpus/Canon_EOS5D-MIII__K6A7944.JPG",
                     "jpeg/metadata-extractor/FujiFilm_FinePixS1Pro_1.jpg", "jpeg/metadata-extractor/Pentax_Optio_S4.jpg"] {
            let original = try Corpus.bytes(path)
            let exif = try #require(ExifBlockLocator.jpeg(original).block, "\(path) has EXIF")
            // Everything up to the end of the EXIF segment is all the reader looks at; the rest
            // would only cost hashing time.
            let start = try #require(original.indices.first { original[$0...].starts(with: ExifBlockLocator.exifHeader) })
            let head = Array(original[..<(start + exif.count)]) + [0xFF, 0xD9]
            for _ in 0..<150 {
                var bytes = head
                for _ in 0..<8 {
                    bytes[start + Int(generator.next() % UInt64(exif.count))] = UInt8(truncatingIfNeeded: generator.next())
                }
                let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: .standard)
                #expect((1...8).contains(metadata.orientation))
            }
        }
    }

    @Test("concurrent reads give the same results as sequential ones")
    func concurrentReads() async throws {
        let paths = try Corpus.manifest().map(\.path).filter { $0.hasPrefix("jpeg/") }.prefix(48)
        var sequential: [String: CaptureMetadata] = [:]
        for path in paths {
            sequential[path] = PhotoMetadata.read(try Corpus.bytes(path), sidecar: nil, fileTime: nil, options: .standard)
        }
        let concurrent = try await withThrowingTaskGroup(of: (String, CaptureMetadata).self) { group in
            for path in paths {
                group.addTask {
                    (path, PhotoMetadata.read(try Corpus.bytes(path), sidecar: nil, fileTime: nil, options: .standard))
                }
            }
            return try await group.reduce(into: [String: CaptureMetadata]()) { $0[$1.0] = $1.1 }
        }
        #expect(concurrent == sequential)
    }

    @Test("every corpus file is read without a crash")
    func everyFileReads() throws {
        let files = Corpus.allFiles()
        #expect(files.count > 300)
        var withTime = 0
        for path in files {
            let bytes = try Corpus.bytes(path)
            let metadata = PhotoMetadata.read(bytes, sidecar: nil, fileTime: Date(timeIntervalSince1970: 1_700_000_000),
                                              options: .standard)
            #expect(metadata.byteSize == bytes.count)
            #expect((1...8).contains(metadata.orientation))
            #expect(metadata.captureTime != nil, "a file time is always the last resort")
            if metadata.captureTime?.trusted == true { withTime += 1 }
        }
        print("corpus read: \(files.count) files without a crash, \(withTime) with a trusted capture time")
    }
}
