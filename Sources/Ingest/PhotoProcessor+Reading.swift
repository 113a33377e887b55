import MetadataReading
import Storage

extension PhotoProcessor {
    /// The photo's bytes, read whole only when its size (from the open file, before any byte is
    /// read) is at most `imaging.max_file_bytes`, and never through a symbolic link.
    func readPhoto(_ input: PhotoInput) throws -> [UInt8] {
        do {
            return try FileSystem.read(input.path, atMost: configuration.maxFileBytes)
        } catch let error as FileTooLargeError {
            throw ProcessingFailure.permanent(
                "the file is \(error.size) bytes, more than imaging.max_file_bytes (\(error.limit)); it was not read. Raise the limit to process it",
                error.category)
        } catch let error as FollowedLinkError {
            throw ProcessingFailure.permanent("the photo is a symbolic link, which is never followed; put the file itself in the spool", error.category)
        }
    }

    /// A spool sidecar's bytes: at most `Sidecar.maxBytes`, its size checked before it is read,
    /// and never through a symbolic link (a link in the spool could name any file this process
    /// may read, whose fields would then be applied).
    static func readSidecar(_ path: String, sourceName: String) throws -> [UInt8] {
        do {
            return try FileSystem.read(path, atMost: Int64(Sidecar.maxBytes))
        } catch let error as FileTooLargeError {
            throw ProcessingFailure.permanent(
                "sidecar \(sourceName).json is \(error.size) bytes, more than the \(error.limit) a sidecar may have; it was not read. Shorten it, then run `darkroom retry`",
                error.category)
        } catch let error as FollowedLinkError {
            throw ProcessingFailure.permanent(
                "sidecar \(sourceName).json is a symbolic link, which is never followed; put the file itself beside the photo, then run `darkroom retry`",
                error.category)
        }
    }
}
