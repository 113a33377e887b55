import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// An exclusive advisory lock on a file (flock), held from init until `release`, shared by
/// every process on the machine that takes the same path.
struct FileLock {
    private let descriptor: Int32

    /// Blocks until the lock is held.
    init(path: String) throws(CatalogError) {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            throw CatalogError.other("cannot open the lock file \(path): \(String(cString: strerror(errno)))")
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let message = String(cString: strerror(errno))
                close(descriptor)
                throw CatalogError.other("cannot lock \(path): \(message)")
            }
        }
    }

    func release() {
        flock(descriptor, LOCK_UN)
        close(descriptor)
    }
}
