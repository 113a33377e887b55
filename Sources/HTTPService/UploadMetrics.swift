import Catalog
import Failures
import ServiceObservability

extension ServiceMetrics {
    /// One photo this process's workers finished: its outcome, the category of its failure and
    /// the seconds from claim to commit. A photo that is an upload this process accepted (its
    /// spool name is the upload's id) also ends that upload (`recordUploadEnded`).
    public func recordPhoto(sourceName: String, outcome: JobRecord.Outcome, failure: FailureCategory? = nil, seconds: Double) {
        recordPhoto(outcome: outcome, failure: failure, seconds: seconds)
        if let id = SpoolOutcomeWatcher.uploadID(ofSpoolName: sourceName) { recordUploadEnded(id: id) }
    }
}
