// Replaced by the real suite of this target.
import XCTest
final class PlaceholderBurrowCLITests: XCTestCase {}
