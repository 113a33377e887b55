import Foundation
import Testing
@testable import Settings

/// What the configuration suites share: a JSON text read as `pipeline.json`, and the one-line
/// problem it gives (nil when it is accepted).
protocol ConfigurationParsing {}

extension ConfigurationParsing {
    func parse(_ json: String) throws(ConfigurationError) -> Configuration {
        try Configuration.parse(Data(json.utf8), file: "test.json")
    }

    func problem(_ json: String) -> String? {
        do {
            _ = try parse(json)
            return nil
        } catch {
            return error.description
        }
    }
}
