import Foundation

/// How `PhotoMetadata.read` interprets what it finds: the default time zone and the limits that
/// decide when a value is believed.
///
/// Every tunable number of the module lives here, with its default, so that the pipeline's
/// `Configuration` can set them from `pipeline.json` and a reader of the code finds them in one place.
public struct MetadataOptions: Sendable, Equatable {
    /// The zone a capture time without a recorded or GPS-derived offset is assumed to be in
    /// (`pipeline.json`: `metadata.default_time_zone`). Times read this way are marked assumed.
    public var defaultTimeZone: TimeZone

    /// Years a capture time may fall in; outside them a date is treated as absent.
    ///
    /// The lower bound is 1826, the year of the oldest surviving photograph, so any earlier date
    /// is a camera whose clock was never set. The upper bound is a fixed calendar year rather
    /// than "now plus a margin" so that reading the same bytes always gives the same answer;
    /// 2100 rejects the clearly bogus (year 9999, 2999) while still accepting the odd camera
    /// clock set to the late 2090s, which a reader of the EXIF would also report.
    public var plausibleYears: ClosedRange<Int>

    /// The largest EXIF block, in bytes, that is handed to the EXIF parser. A PNG `eXIf` chunk
    /// that claims more is ignored with a warning: EXIF written by cameras fits in 64 KiB.
    public var maxExifBytes: Int

    /// When a sidecar's time and the EXIF time differ by more than this many seconds, the
    /// difference is recorded as a conflict (and the sidecar wins only when
    /// `sidecarOverridesExif`).
    public var sidecarTimeTolerance: TimeInterval

    /// When a sidecar's location and the EXIF location are further apart than this many metres,
    /// the difference is recorded as a conflict (and the sidecar wins only when
    /// `sidecarOverridesExif`).
    public var sidecarDistanceTolerance: Double

    /// Whether the sidecar is the backend's own word about the photo (an upload's fields, a
    /// sidecar in the spool): then its `taken_at` and location win over EXIF when the two
    /// disagree, as the user's own correction, and the camera's values are kept beside them
    /// (`CaptureMetadata.cameraCaptureTime`, `cameraLocation`). When false (an imported
    /// library's Takeout or XMP files, written by other tools), the sidecar only fills what EXIF
    /// lacks.
    public var sidecarOverridesExif: Bool

    /// Whether a capture time without a recorded, GPS-derived or maker-note offset takes the
    /// time zone of the place it was taken (the gazetteer's zone of its location, at that date)
    /// before the default zone.
    public var zoneFromPlace: Bool

    /// Options with the given default zone and the documented default limits.
    public init(
        defaultTimeZone: TimeZone = .gmt,
        plausibleYears: ClosedRange<Int> = 1826...2100,
        maxExifBytes: Int = 1 << 20,
        sidecarTimeTolerance: TimeInterval = 60,
        sidecarDistanceTolerance: Double = 100,
        sidecarOverridesExif: Bool = false,
        zoneFromPlace: Bool = true
    ) {
        self.zoneFromPlace = zoneFromPlace
        self.sidecarOverridesExif = sidecarOverridesExif
        self.defaultTimeZone = defaultTimeZone
        self.plausibleYears = plausibleYears
        self.maxExifBytes = maxExifBytes
        self.sidecarTimeTolerance = sidecarTimeTolerance
        self.sidecarDistanceTolerance = sidecarDistanceTolerance
    }

    /// UTC as the default zone and every limit at its default.
    public static let standard = MetadataOptions()
}

/// Facts of the world the module relies on; not configuration, but named so that no bare
/// number stands in the code.
enum MetadataLimits {
    /// Every UTC offset in use today is a multiple of 15 minutes (Nepal +05:45, Chatham +12:45),
    /// so an offset derived from GPS time is rounded to this step, in seconds.
    static let offsetRoundingSeconds = 15 * 60
    /// How far the camera's clock may be from the GPS clock, beyond a whole offset, for the GPS
    /// time to give the offset: cameras drift by a minute or two between settings.
    static let gpsClockToleranceSeconds = 120.0
    /// Mean Earth radius in metres, for great-circle distances.
    static let earthRadiusMetres = 6_371_008.8
}
