/// The seeded generator (`SplitMix64`, Sources/SeededRandom) for every test target that imports
/// TestSupport: randomized tests replay exactly from their seed.
@_exported import SeededRandom
