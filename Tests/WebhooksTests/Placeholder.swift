import Testing
@testable import Webhooks
