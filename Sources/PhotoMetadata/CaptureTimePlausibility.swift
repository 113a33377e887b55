import Foundation

/// Capture times that cannot be right: a camera's factory date (its clock never set), or a time
/// later than the photo's arrival plus a day. Such a time is kept and shown, but marked
/// untrusted, so that moments do not use it, with a warning saying why.
public enum CaptureTimePlausibility {
    /// Wall times cameras start from when their clock was never set (seconds ignored).
    static let factoryDates: Set<String> = [
        "1970-01-01T00:00", "1980-01-01T00:00", "1990-01-01T00:00", "2000-01-01T00:00",
        "2001-01-01T00:00", "2002-01-01T00:00", "2004-01-01T00:00", "2005-01-01T00:00",
        "2006-01-01T00:00", "2007-01-01T00:00", "2008-01-01T00:00", "2009-01-01T00:00",
        "2010-01-01T00:00", "2011-01-01T00:00", "2012-01-01T00:00",
    ]

    /// How long after its arrival a photo's capture time may be (clocks and zones disagree by hours).
    public static let futureMargin: TimeInterval = 24 * 3600

    /// Why `time` cannot be right for a photo that arrived at `arrival`, or nil.
    public static func problem(_ time: CaptureTime, arrival: Date?) -> String? {
        if factoryDates.contains(String(time.localTime.prefix(16))) {
            return "capture time \(time.localTime) is a camera's factory date (its clock was never set)"
        }
        if let arrival, time.instant > arrival.addingTimeInterval(futureMargin) {
            return "capture time \(ISO8601Instant.format(time.instant)) is later than the photo's arrival "
                + "(\(ISO8601Instant.format(arrival))) plus a day"
        }
        return nil
    }

    /// `time`, untrusted with a warning when it is a factory date.
    static func flagFactoryDate(_ time: CaptureTime?, warnings: inout [String]) -> CaptureTime? {
        guard var time, time.trusted, let problem = problem(time, arrival: nil) else { return time }
        warnings.append(problem + "; not trusted, the photo stays out of automatic moments")
        time.trusted = false
        return time
    }

    /// `metadata` with its capture time untrusted and a warning when it is later than `arrival`
    /// plus a day (or a factory date).
    public static func checked(_ metadata: CaptureMetadata, arrival: Date) -> CaptureMetadata {
        guard let time = metadata.captureTime, time.trusted, let problem = problem(time, arrival: arrival) else { return metadata }
        var result = metadata
        result.captureTime?.trusted = false
        result.warnings.append(problem + "; not trusted, the photo stays out of automatic moments")
        return result
    }
}
