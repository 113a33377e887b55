import Foundation
import Testing
@testable import Settings

@Suite("pipeline.json")
struct ConfigurationTests: ConfigurationParsing {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path


    @Test func theBundledFileSaysWhatTheDefaultsSay() throws {
        let bundled = try Configuration.load(path: Self.packageRoot + "/pipeline.json")
        let defaults = Configuration.defaults
        #expect(bundled.variants == defaults.variants)
        #expect(bundled.feedVariant == defaults.feedVariant)
        #expect(bundled.pixelLimit == defaults.pixelLimit)
        #expect(bundled.background == defaults.background)
        #expect(bundled.defaultTimeZone == defaults.defaultTimeZone)
        #expect(bundled.spoolRoot == defaults.spoolRoot)
        #expect(bundled.catalogPath == defaults.catalogPath)
        #expect(bundled.libraryRoot == defaults.libraryRoot)
        #expect(bundled.settleSeconds == defaults.settleSeconds)
        #expect(bundled.pixelBudget == defaults.pixelBudget)
        #expect(bundled.server == defaults.server)
        #expect(bundled.webhooks == defaults.webhooks)
    }

    @Test func theDefaultVariantsAreTheAppsPictureFieldsAndTheFeed() {
        let v = Configuration.defaults.variants
        #expect(v.map(\.name) == ["thumb", "preview", "mobile", "feed"])
        #expect(v.map(\.width) == [320, 1024, 2048, 1080])
        #expect(v.map(\.height) == [320, 1024, 2048, 1350])
        #expect(v.map(\.fit.rawValue) == ["cover", "contain", "contain", "cover"])
    }

    @Test(arguments: [
        (#"{"variants": [{"name": "t", "fit": "stretch", "width": 1, "height": 1}]}"#, "variants[0].fit"),
        (#"{"variants": [{"name": "t", "fit": "cover", "width": -5, "height": 1}]}"#, "variants[0].width"),
        (#"{"variants": [{"name": "t", "fit": "cover", "width": 5, "height": 1, "quality": 101}]}"#, "variants[0].quality"),
        (#"{"variants": [{"name": "../x", "fit": "cover", "width": 5, "height": 1}]}"#, "variants[0].name"),
        (#"{"variants": [{"name": "t", "fit": "cover", "width": 5, "height": 1, "format": "gif"}]}"#, "variants[0].format: must be \"jpeg\" or \"webp\""),
        (#"{"server": {"idle_timeout_seconds": 0}}"#, "server.idle_timeout_seconds"),
        (#"{"imaging": {"pixel_limt": 5}}"#, "imaging.pixel_limt: unknown key"),
        (#"{"imaging": {"pixel_limit": "many"}}"#, "imaging.pixel_limit: must be a number"),
        (#"{"imaging": {"background": "blue"}}"#, "imaging.background"),
        (#"{"metadata": {"default_time_zone": "Mars/Olympus"}}"#, "metadata.default_time_zone: unknown time zone"),
        (#"{"feed_variant": "poster"}"#, "feed_variant: names no variant"),
        (#"{"spool": {"settle_seconds": -1}}"#, "spool.settle_seconds"),
        (#"{"worker": {"max_attempts": 0}}"#, "worker.max_attempts"),
        (#"{"server": {"port": 70000}}"#, "server.port: must be a whole number from 0 to 65535"),
        (#"{"server": {"run_workers": "yes"}}"#, "server.run_workers: must be true or false"),
        (#"{"server": {"media_base_url": "ftp://x"}}"#, "server.media_base_url"),
        (#"{"webhooks": {"urls": ["not a url"]}}"#, "webhooks.urls[0]"),
        (#"{"webhooks": {"secrt": "x"}}"#, "webhooks.secrt: unknown key"),
        (#"[1, 2]"#, "the top level must be a JSON object"),
        (#"{"variants": "#, "not valid JSON"),
    ])
    func anInvalidFileNamesTheKeyAndTheProblem(json: String, expected: String) {
        let message = problem(json)
        #expect(message?.hasPrefix("test.json: ") == true)
        #expect(message?.contains(expected) == true, "\(message ?? "no error")")
    }

    @Test func aVariantMayBeWebP() throws {
        let c = try parse(#"{"variants": [{"name": "t", "fit": "contain", "width": 64, "height": 64, "format": "webp", "quality": 70}], "feed_variant": "t"}"#)
        #expect(c.variants.map(\.format) == [.webp])
    }

    @Test func missingKeysTakeTheDefaultsAndGivenOnesWin() throws {
        let c = try parse(#"{"spool": {"root": "/srv/spool", "settle_seconds": 0.5}, "worker": {"concurrency": 3}}"#)
        #expect(c.spoolRoot == "/srv/spool")
        #expect(c.settleSeconds == 0.5)
        #expect(c.effectiveConcurrency == 3)
        #expect(c.catalogPath == Configuration.defaults.catalogPath)
    }

    @Test func secretsComeFromTheFileOrElseTheEnvironment() throws {
        let c = try parse(#"{"server": {"port": 9000}, "webhooks": {"urls": ["http://127.0.0.1:9/hook"]}}"#)
        #expect(c.server.port == 9000)
        #expect(c.server.resolvedToken(environment: [:]) == nil)
        #expect(c.server.resolvedToken(environment: ["DARKROOM_API_TOKEN": "t0k"]) == "t0k")
        #expect(c.webhooks.resolvedSecret(environment: ["DARKROOM_WEBHOOK_SECRET": "s3c"]) == "s3c")
        let written = try parse(#"{"server": {"token": "file"}, "webhooks": {"secret": "fs"}}"#)
        #expect(written.server.resolvedToken(environment: ["DARKROOM_API_TOKEN": "env"]) == "file")
        #expect(written.webhooks.resolvedSecret(environment: [:]) == "fs")
    }
}
