import Failures

/// Why a photo could not be probed or rendered. Each description is one line that says what
/// is wrong and, where it helps, what to do; it names no file (the caller adds the name).
public enum ImagingError: CategorizedError, CustomStringConvertible, Equatable {
    /// The file has no bytes at all.
    case emptyFile
    /// Neither JPEG nor PNG; the associated text says what the bytes look like.
    case notAnImage(looksLike: String)
    /// The data ends before the image does.
    case truncated(format: ImageFormat, detail: String)
    /// The codec refused the data; the associated text is its message.
    case corrupt(format: ImageFormat, detail: String)
    /// The header claims more pixels than the configured limit (a likely decompression bomb).
    case tooManyPixels(width: Int, height: Int, limit: Int)
    /// The header declares a zero width or height.
    case zeroSize(width: Int, height: Int)
    /// A 12-bit (or other non-8-bit) JPEG, which the installed libjpeg cannot decode.
    case unsupportedPrecision(bits: Int)
    /// A recipe that cannot be rendered (empty name, non-positive size, quality outside 1...100).
    case invalidRecipe(name: String, reason: String)
    /// A background colour that is not `#rrggbb`.
    case invalidColour(String)
    /// Memory for the pixels could not be had.
    case outOfMemory(width: Int, height: Int)
    /// The encoder refused to write a variant.
    case encodeFailed(variant: String, detail: String)
    /// Decoding would need more memory than the per-photo ceiling (a progressive JPEG's
    /// whole-image coefficient buffers); the associated text names the sizes.
    case overMemoryCeiling(detail: String)
    /// The thread's deadline (`Deadline.during`) passed: the work was stopped where it was.
    case pastDeadline

    /// One line: what is wrong and what to do.
    public var description: String {
        switch self {
        case .emptyFile:
            return "file is empty (0 bytes); upload it again"
        case .notAnImage(let looksLike):
            return "not a JPEG, PNG, HEIC, HEIF or AVIF image (the bytes look like \(looksLike)); re-export the photo as JPEG or PNG"
        case .truncated(let format, let detail):
            return "\(format.rawValue.uppercased()) file is truncated (\(detail)); upload the complete file again"
        case .corrupt(let format, let detail):
            return "\(format.rawValue.uppercased()) data is corrupt (\(detail)); re-export the photo as JPEG or PNG"
        case .tooManyPixels(let width, let height, let limit):
            return "image claims \(width)×\(height) pixels, above the limit of \(limit) pixels; "
                + "refused as a possible decompression bomb (raise imaging.pixel_limit if it is genuine)"
        case .zeroSize(let width, let height):
            return "image header declares a zero size (\(width)×\(height)); the file is damaged"
        case .unsupportedPrecision(let bits):
            return "\(bits)-bit JPEG is not supported (only 8-bit samples); re-export the photo as an 8-bit JPEG or PNG"
        case .invalidRecipe(let name, let reason):
            return "variant recipe '\(name)' is invalid: \(reason); fix it in pipeline.json"
        case .invalidColour(let text):
            return "background colour '\(text)' is not of the form #rrggbb; fix imaging.background in pipeline.json"
        case .outOfMemory(let width, let height):
            return "not enough memory to decode \(width)×\(height) pixels; lower the worker count or the pixel limit"
        case .encodeFailed(let variant, let detail):
            return "could not encode variant '\(variant)' (\(detail))"
        case .overMemoryCeiling(let detail):
            return "\(detail); refused as a possible decompression bomb (re-save it as a baseline JPEG, or raise imaging.pixel_limit if it is genuine)"
        case .pastDeadline:
            return "decoding was stopped at the photo's deadline"
        }
    }

    /// What kind of failure this is, for metrics and reports.
    public var category: FailureCategory {
        switch self {
        case .emptyFile, .truncated, .corrupt, .zeroSize: .badInput
        case .notAnImage, .unsupportedPrecision: .unsupportedFormat
        case .tooManyPixels, .outOfMemory, .overMemoryCeiling: .tooLarge
        case .pastDeadline: .timeout
        case .invalidRecipe, .invalidColour: .configuration
        case .encodeFailed: .internal
        }
    }
}
