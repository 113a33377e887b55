import Foundation
import Testing
@testable import PhotoMetadata
import SeededRandom

@Suite("Containers, identity and bad input")
struct ContainerTests {
    private func read(_ bytes: [UInt8]) -> CaptureMetadata {
        PhotoMetadata.read(bytes, sidecar: nil, fileTime: nil, options: .standard)
    }

    private func datedFixture() -> ExifFixture {
        var fixture = ExifFixture()
        fixture.exif = [fixture.ascii(Tag.dateTimeOriginal, "2024:05:07 09:33:04")]
        fixture.ifd0 = [fixture.short(Tag.orientation, 3)]
        return fixture
    }

    @Test("MIME type, size and SHA-256 come from the bytes")
    func identity() {
        let metadata = read(Array("abc".utf8))
        #expect(metadata.mimeType == nil)
        #expect(metadata.byteSize == 3)
        // FIPS 180-2 test vector.
        #expect(metadata.sha256 == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(read(datedFixture().jpeg).mimeType == "image/jpeg")
        #expect(read(datedFixture().png).mimeType == "image/png")
        #expect(PhotoMetadata.sha256Hex([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }

    @Test("an empty file reads as nothing, with a warning")
    func emptyFile() {
        let metadata = read([])
        #expect(metadata.captureTime == nil)
        #expect(metadata.orientation == 1)
        #expect(metadata.warnings.contains { $0.contains("empty file") })
    }

    @Test("the EXIF segment is found after other APP segments")
    func exifAfterOtherSegments() {
        let jpeg = datedFixture().jpeg
        let xmpBody = Array("http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>".utf8)
        let xmp: [UInt8] = [0xFF, 0xE1, 0, UInt8(xmpBody.count + 2)] + xmpBody
        let jfif: [UInt8] = [0xFF, 0xE0, 0, 16] + Array("JFIF\0".utf8) + [1, 1, 0, 0, 1, 0, 1, 0, 0]
        let metadata = read(Array(jpeg[0..<2]) + jfif + xmp + Array(jpeg[2...]))
        #expect(metadata.captureTime?.localTime == "2024-05-07T09:33:04")
        #expect(metadata.orientation == 3)
    }

    @Test("a truncated EXIF segment gives what it holds, with a warning, and never crashes")
    func truncatedExif() {
        let jpeg = datedFixture().jpeg
        for length in 0...jpeg.count {
            let metadata = read(Array(jpeg.prefix(length)))
            #expect(metadata.byteSize == length)
        }
        let cut = read(Array(jpeg.prefix(jpeg.count - 4)))
        #expect(cut.warnings.contains { $0.contains("truncated") })
    }

    @Test("random corruption of the EXIF block never crashes")
    func corruptedExif() {
        var generator = SplitMix64(seed: 0x5EED)
        let jpeg = datedFixture().jpeg
        for _ in 0..<500 {
            var bytes = jpeg
            for _ in 0..<4 {
                let index = 6 + Int(generator.next() % UInt64(bytes.count - 6))
                bytes[index] = UInt8(truncatingIfNeeded: generator.next())
            }
            let metadata = read(bytes)
            #expect((1...8).contains(metadata.orientation))
        }
    }

    @Test("a PNG eXIf chunk longer than the file is ignored with a warning")
    func hugeExifChunk() {
        let png = ExifFixture.pngSignature + ExifFixture.chunk("eXIf", Array(repeating: 0, count: 8),
                                                               claimedLength: 0x7FFF_FFF0)
        let metadata = read(png)
        #expect(metadata.warnings.contains { $0.contains("eXIf chunk claims 2147483632 bytes") })
    }

    @Test("a PNG eXIf chunk over the size limit is ignored with a warning")
    func exifChunkOverLimit() {
        let fixture = datedFixture()
        var options = MetadataOptions.standard
        options.maxExifBytes = 16
        let metadata = PhotoMetadata.read(fixture.png, sidecar: nil, fileTime: nil, options: options)
        #expect(metadata.captureTime == nil)
        #expect(metadata.warnings.contains { $0.contains("exceeds the 16-byte limit") })
    }

    @Test("orientation outside 1-8, or absent, reads as 1 with a warning", arguments: [0, 9, 300])
    func invalidOrientation(_ value: Int) {
        var fixture = ExifFixture()
        fixture.ifd0 = [fixture.short(Tag.orientation, UInt16(value))]
        let metadata = read(fixture.jpeg)
        #expect(metadata.orientation == 1)
        #expect(metadata.warnings.contains { $0.contains("Orientation \(value) is not 1-8") })
        #expect(read(ExifFixture().jpeg).warnings.contains { $0.contains("no EXIF Orientation") })
    }
}

