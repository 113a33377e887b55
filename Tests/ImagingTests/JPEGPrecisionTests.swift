import Testing
@testable import Imaging

/// A JPEG of other than 8-bit samples is refused naming its precision, whatever libjpeg reached.
@Suite("JPEG precision")
struct JPEGPrecisionTests {
    /// SOI, a 16×16 three-component SOF1 frame header of `precision` bits, EOI: no tables, no scan.
    static func header(precision: UInt8) -> [UInt8] {
        [0xFF, 0xD8, 0xFF, 0xC1, 0x00, 0x11, precision, 0x00, 0x10, 0x00, 0x10, 0x03,
         0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01, 0xFF, 0xD9]
    }

    @Test("a bare 12-bit frame header is refused as 12-bit by probe and render", arguments: [UInt8(12), 16])
    func bareHeader(precision: UInt8) throws {
        let bytes = Self.header(precision: precision)
        for attempt in [{ _ = try Imaging.probe(bytes) }, { _ = try Imaging.render(bytes, recipes: VariantRecipe.defaults, options: RenderOptions()) }] {
            do {
                try attempt()
                Issue.record("a \(precision)-bit JPEG was accepted")
            } catch let error as ImagingError {
                #expect(error == .unsupportedPrecision(bits: Int(precision)))
                #expect(error.description.hasPrefix("\(precision)-bit JPEG is not supported"), "\(error.description)")
            }
        }
    }

    @Test("an 8-bit header with the same layout is not taken for another precision")
    func eightBit() {
        #expect(throws: ImagingError.self) { try Imaging.probe(Self.header(precision: 8)) }
        do { _ = try Imaging.probe(Self.header(precision: 8)) } catch let error as ImagingError {
            #expect(error != .unsupportedPrecision(bits: 8) && error != .unsupportedPrecision(bits: 0))
        } catch {}
    }
}
