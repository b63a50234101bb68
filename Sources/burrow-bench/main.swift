print("burrow-bench: benchmarks are added per issue")
