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
        var picture = PictureRecord(
            sha256: metadata.sha256, sourceName: sourceName, originalPath: originalPath,
            mimeType: metadata.mimeType ?? info.format.mimeType, byteSize: Int64(metadata.byteSize),
            width: info.width, height: info.height,
            displayWidth: rendered.displayWidth, displayHeight: rendered.displayHeight,
            orientation: metadata.orientation,
            locationSource: metadata.location?.source.rawValue ?? LocationSource.none.rawValue,
            metadataJson: StableJSON.string(metadata), createdAt: now.timeIntervalSince1970)
        picture.make = metadata.make
        picture.model = metadata.model
        if let time = metadata.captureTime {
            picture.capturedAt = time.instant.timeIntervalSince1970
            picture.capturedLocal = time.localTime
            picture.capturedOffset = time.offsetSeconds
            picture.timeSource = time.source.rawValue
            picture.timeZoneSource = time.offsetSource.rawValue
            picture.timeTrusted = time.trusted
            // Moments use only a trusted time: a file time says when a copy was made.
            picture.momentTime = time.trusted ? time.instant.timeIntervalSince1970 : nil
        }
        if let location = metadata.location {
            picture.latitude = location.latitude
            picture.longitude = location.longitude
            picture.altitude = location.altitude
            picture.positionError = location.horizontalError
        }
        picture.cameraCapturedAt = metadata.cameraCaptureTime?.instant.timeIntervalSince1970
        picture.cameraLatitude = metadata.cameraLocation?.latitude
        picture.cameraLongitude = metadata.cameraLocation?.longitude
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
}
