import CHEIF
import Crypto
import Foundation
import MetadataReading

/// Reads a photo's metadata (capture time, location, orientation, camera and identity; not pixel dimensions) from its
/// bytes, its optional sidecar and its file time.
public enum PhotoMetadata {
    /// The image types Darkroom accepts, by their magic bytes.
    public enum MediaType: String, Sendable {
        /// A JPEG file (`FF D8 FF`).
        case jpeg = "image/jpeg"
        /// A PNG file (the 8-byte PNG signature).
        case png = "image/png"
        /// A HEIF file with HEVC images (its `ftyp` brands, as libheif reads them).
        case heic = "image/heic"
        /// A HEIF file of another coding.
        case heif = "image/heif"
        /// A HEIF file with AV1 images.
        case avif = "image/avif"

        /// The type the bytes start like, or nil.
        public static func sniff(_ bytes: [UInt8]) -> MediaType? {
            if bytes.count >= 3 && bytes[0] == 0xFF && bytes[1] == 0xD8 && bytes[2] == 0xFF { return .jpeg }
            if bytes.starts(with: ExifBlockLocator.pngSignature) { return .png }
            let type = bytes.withUnsafeBufferPointer { dr_heif_mime_type($0.baseAddress, $0.count) }
            return type.flatMap { MediaType(rawValue: String(cString: $0)) }
        }
    }

    /// Reads everything from the bytes of a photo, its optional sidecar and its file time.
    ///
    /// Never throws and never stops on bad input: a corrupt or missing EXIF block leaves its fields
    /// empty (orientation 1) and says why in `warnings`; the sidecar fills what the file lacks (or,
    /// with `options.sidecarOverridesExif`, wins where it disagrees) and
    /// says where the two disagreed (`conflicts`).
    public static func read(_ bytes: [UInt8], sidecar: Sidecar?, fileTime: Date?,
                            options: MetadataOptions) -> CaptureMetadata {
        var warnings: [String] = []
        let mediaType = MediaType.sniff(bytes)
        let block: ExifBlockLocator.Found
        switch mediaType {
        case .jpeg:
            block = ExifBlockLocator.jpeg(bytes)
        case .png:
            block = ExifBlockLocator.png(bytes, maxBytes: options.maxExifBytes)
        case .heic, .heif, .avif:
            block = ExifBlockLocator.heif(bytes, maxBytes: options.maxExifBytes)
        case nil:
            block = ExifBlockLocator.Found(block: nil, warnings: [
                bytes.isEmpty ? "empty file; not a JPEG, PNG or HEIF" : "not a JPEG, PNG or HEIF (unknown magic bytes); no EXIF read",
            ])
        }
        warnings += block.warnings

        var tags: ExifTags?
        var makerNoteZone: MakerNoteZone?
        if var exif = block.block {
            if exif.count > options.maxExifBytes {
                warnings.append("EXIF block of \(exif.count) bytes exceeds the \(options.maxExifBytes)-byte limit; "
                                + "only the start is read")
                exif = Array(exif.prefix(options.maxExifBytes))
            }
            let read = ExifReader.read(exif)
            tags = read.tags
            warnings += read.warnings
            makerNoteZone = MakerNoteZone.read(block: exif, make: read.tags?.string(ExifTagNumber.make, in: .ifd0))
        } else if mediaType != nil {
            warnings.append("no EXIF block")
        }

        // The place first: its time zone is one of the guesses for a time without an offset.
        var place = LocationResolver(tags: tags, sidecar: sidecar, options: options)
        let location = place.resolve()
        var time = CaptureTimeResolver(tags: tags, sidecar: sidecar, fileTime: fileTime, options: options,
                                       makerNoteZone: makerNoteZone, location: location)
        let captureTime = CaptureTimePlausibility.flagFactoryDate(time.resolve(), warnings: &warnings)
        warnings += time.warnings
        warnings += place.warnings

        return CaptureMetadata(
            captureTime: captureTime,
            location: location,
            orientation: orientation(tags, warnings: &warnings),
            make: tags?.string(ExifTagNumber.make, in: .ifd0),
            model: tags?.string(ExifTagNumber.model, in: .ifd0),
            mimeType: mediaType?.rawValue,
            byteSize: bytes.count,
            sha256: sha256Hex(bytes),
            authorId: sidecar?.authorId,
            momentId: sidecar?.momentId,
            title: sidecar?.title,
            focalPoint: sidecar?.focalPoint,
            visibility: sidecar?.visibility,
            warnings: warnings,
            conflicts: time.conflicts + place.conflicts,
            cameraCaptureTime: time.cameraTime,
            cameraLocation: place.cameraLocation)
    }

    /// The SHA-256 of `bytes` as 64 lowercase hex digits.
    public static func sha256Hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in SHA256.hash(data: bytes) {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// IFD0 Orientation when it is 1–8; otherwise 1 (upright) with a warning.
    private static func orientation(_ tags: ExifTags?, warnings: inout [String]) -> Int {
        guard let values = tags?.integers(ExifTagNumber.orientation, in: .ifd0), let value = values.first else {
            warnings.append("no EXIF Orientation; upright (1) assumed")
            return 1
        }
        guard (1...8).contains(value) else {
            warnings.append("EXIF Orientation \(value) is not 1-8; upright (1) assumed")
            return 1
        }
        return Int(value)
    }
}
