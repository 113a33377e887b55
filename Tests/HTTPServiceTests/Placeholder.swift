import Testing
@testable import HTTPService
