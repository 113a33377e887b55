import Catalog
import Foundation
import Imaging
import Moments
import PhotoMetadata
import JSONValues

/// Maps what was read and rendered from a photo onto its catalog row.
public enum PictureRecordBuilder {
    /// `now` is the photo's arrival: a capture time later than it plus a day is kept but untrusted
    /// (`CaptureTimePlausibility`), so that moments do not use it.
    public static func make(metadata read: CaptureMetadata, info: ImageInfo, rendered: RenderResult, sourceName: String,
                     originalPath: String, feed: VariantRecipe, now: Date) -> PictureRecord {
        let metadata = CaptureTimePlausibility.checked(read, arrival: now)
        let facts = captureFacts(checked: metadata, sourceName: sourceName)
        var picture = PictureRecord(
            sha256: metadata.sha256, sourceName: sourceName, originalPath: originalPath,
            mimeType: metadata.mimeType ?? info.format.mimeType, byteSize: Int64(metadata.byteSize),
            width: info.width, height: info.height,
            displayWidth: rendered.displayWidth, displayHeight: rendered.displayHeight,
            orientation: metadata.orientation,
            locationSource: metadata.locationSource.rawValue,
            metadataJson: facts.metadataJson, createdAt: now.timeIntervalSince1970)
        picture.make = metadata.make
        picture.model = metadata.model
        // Moments use only a trusted time (`momentTime`): a file time says when a copy was made.
        picture.setCapture(facts)
        picture.authorId = metadata.authorId
        picture.title = metadata.title
        picture.visibility = metadata.visibility
        picture.requestedMomentId = metadata.momentId
        picture.focalX = metadata.focalPoint?.x
        picture.focalY = metadata.focalPoint?.y
        if let variant = rendered.variants.first(where: { $0.name == feed.name }), let crop = variant.crop {
            picture.feedCropX = crop.x
            picture.feedCropY = crop.y
            picture.feedCropWidth = crop.width
            picture.feedCropHeight = crop.height
            picture.feedCropSource = variant.cropSource.rawValue
        }
        let statistics = rendered.statistics
        picture.sharpness = statistics.sharpness
        picture.meanLuma = statistics.meanLuma
        picture.clippedFraction = statistics.clippedFraction
        picture.thumbHash = Data(rendered.thumbHash).base64EncodedString()
        picture.coverScore = CoverScore.score(
            sharpness: statistics.sharpness, meanLuma: statistics.meanLuma, clippedFraction: statistics.clippedFraction,
            width: rendered.displayWidth, height: rendered.displayHeight,
            feedAspect: Double(feed.width) / Double(feed.height)).value
        return picture
    }

    /// When and where, as the picture of a photo that arrived at `now` with this metadata
    /// would hold them: what a duplicate gives the picture of its bytes where it lacks them.
    public static func captureFacts(metadata read: CaptureMetadata, sourceName: String, now: Date) -> CaptureFacts {
        captureFacts(checked: CaptureTimePlausibility.checked(read, arrival: now), sourceName: sourceName)
    }

    /// The facts of metadata whose time was checked for plausibility.
    private static func captureFacts(checked metadata: CaptureMetadata, sourceName: String) -> CaptureFacts {
        CaptureFacts(
            time: metadata.captureTime.map { time in
                CaptureFacts.Time(capturedAt: time.instant.timeIntervalSince1970, capturedLocal: time.localTime,
                                  capturedOffset: time.offsetSeconds, source: time.source.rawValue,
                                  zoneSource: time.offsetSource.rawValue, trusted: time.trusted)
            },
            location: metadata.location.map { location in
                CaptureFacts.Location(latitude: location.latitude, longitude: location.longitude, altitude: location.altitude,
                                      positionError: location.horizontalError, source: location.source.rawValue)
            },
            cameraCapturedAt: metadata.cameraCaptureTime?.instant.timeIntervalSince1970,
            cameraLatitude: metadata.cameraLocation?.latitude, cameraLongitude: metadata.cameraLocation?.longitude,
            metadataJson: StableJSON.string(metadata), sourceName: sourceName)
    }
}
